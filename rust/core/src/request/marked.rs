//! Marked text: what no provider has a part for (file references, MCP resources, an image known
//! only by its recognized text, thinking replayed as text) as `<tag ...>` text a model reads.

use std::fmt::Write as _;

use crate::canonical::{self, FileStatus, ImageBlock, ImageSource};

/// `<tag a="v" ...>\nbody\n</tag>`, or `<tag a="v" .../>` without a body. Attribute values are
/// escaped (`&`, `"`, `<`); the body is written as it is.
pub(crate) fn marked(tag: &str, attributes: &[(&str, &str)], body: &str) -> String {
    let mut out = String::with_capacity(tag.len() * 2 + body.len() + 16);
    out.push('<');
    out.push_str(tag);
    for (name, value) in attributes {
        let _ = write!(out, " {name}=\"");
        for c in value.chars() {
            match c {
                '&' => out.push_str("&amp;"),
                '"' => out.push_str("&quot;"),
                '<' => out.push_str("&lt;"),
                c => out.push(c),
            }
        }
        out.push('"');
    }
    if body.is_empty() {
        out.push_str("/>");
    } else {
        let _ = write!(out, ">\n{body}\n</{tag}>");
    }
    out
}

/// A file reference as text, its header naming the path and the lines:
/// `<file path="src/a.rs" lines="3-4">\n3 | x = 1\n4 | y = 2\n</file>`, each line numbered (numbers
/// right-aligned to the widest). Unresolved, the reference alone, saying why:
/// `<file path="a.rs" status="error" error="file not found"/>`, or `status="pending"` when nothing
/// read it before the request was built.
pub(crate) fn file_text(file: &canonical::FileReferenceBlock) -> String {
    let lines = match (file.start_line, file.end_line) {
        (Some(s), Some(e)) => format!("{s}-{e}"),
        (Some(s), None) => format!("{s}-"),
        (None, Some(e)) => format!("1-{e}"),
        (None, None) => String::new(),
    };
    let mut attributes = vec![("path", file.path.as_str())];
    if !lines.is_empty() {
        attributes.push(("lines", &lines));
    }
    if let Some(content) = &file.resolved_content {
        if content.is_empty() {
            return marked("file", &attributes, "(empty)");
        }
        return marked("file", &attributes, &numbered(content, file.start_line.unwrap_or(1)));
    }
    let (status, why) = match &file.error {
        Some(error) => ("error", error.as_str()),
        None => ("pending", "not read before the request was built"),
    };
    attributes.extend([("status", status), ("error", why)]);
    marked("file", &attributes, "")
}

/// `text` with each line prefixed by its number (from `first`) and ` | `, the numbers right-aligned.
fn numbered(text: &str, first: i64) -> String {
    // saturating: a start line near i64::MAX (the document says so) must not overflow
    let number = |i: usize| first.saturating_add(i64::try_from(i).unwrap_or(i64::MAX));
    let count = text.lines().count();
    let width = first.to_string().len().max(number(count.saturating_sub(1)).to_string().len());
    let mut out = String::with_capacity(text.len() + count * (width + 4));
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let _ = write!(out, "{:>width$} | {line}", number(i));
    }
    out
}

/// An MCP resource as text: `<mcp_resource server="s" uri="u" mime_type="m">\n...\n</mcp_resource>`;
/// binary content as a note of its size (the model cannot read base64); unretrieved, saying why.
pub(crate) fn mcp_text(resource: &canonical::McpResourceBlock) -> String {
    let mut attributes = vec![("server", resource.server_name.as_str()), ("uri", resource.resource_uri.as_str())];
    if let Some(mime) = &resource.mime_type {
        attributes.push(("mime_type", mime));
    }
    if let Some(content) = &resource.content {
        return marked("mcp_resource", &attributes, content);
    }
    if let Some(blob) = &resource.blob {
        let bytes = base64_len(blob);
        return marked("mcp_resource", &attributes, &format!("(binary content, {bytes} bytes, not shown)"));
    }
    match (&resource.error, resource.status) {
        (Some(error), _) => attributes.extend([("status", "error"), ("error", error.as_str())]),
        (None, FileStatus::Pending) => {
            attributes.extend([("status", "pending"), ("error", "not retrieved before the request was built")]);
        }
        (None, _) => {}
    }
    marked("mcp_resource", &attributes, "")
}

/// The number of bytes base64 text decodes to (padding and whitespace not counted).
fn base64_len(text: &str) -> usize {
    let symbols = text.bytes().filter(|b| !b.is_ascii_whitespace() && *b != b'=').count();
    symbols * 3 / 4
}

/// An image as text, when it has some: `<image path="a.png">\nrecognized text\n</image>`.
pub(crate) fn image_text(image: &ImageBlock) -> Option<String> {
    let text = image.recognized_text.as_deref().or(image.vision_analysis.as_deref()).filter(|t| !t.is_empty())?;
    let attribute = match &image.source {
        ImageSource::Url { url } => ("url", url.as_str()),
        ImageSource::Base64 { media_type, .. } => ("media_type", media_type.as_str()),
        ImageSource::Path { path, .. } => ("path", path.as_str()),
    };
    Some(marked("image", &[attribute], text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marked_text_escapes_attributes_only() {
        assert_eq!(
            marked("file", &[("path", "a\"<&.rs")], "x < y"),
            "<file path=\"a&quot;&lt;&amp;.rs\">\nx < y\n</file>"
        );
        assert_eq!(marked("file", &[("path", "a")], ""), "<file path=\"a\"/>");
    }

    fn file(path: &str, lines: (Option<i64>, Option<i64>), content: Option<&str>, error: Option<&str>) -> String {
        file_text(&canonical::FileReferenceBlock {
            path: path.into(),
            start_line: lines.0,
            end_line: lines.1,
            resolved_content: content.map(Into::into),
            status: if content.is_some() { FileStatus::Resolved } else { FileStatus::Pending },
            error: error.map(Into::into),
        })
    }

    #[test]
    fn file_references_are_numbered_under_a_header() {
        assert_eq!(
            file("src/app.py", (Some(9), Some(10)), Some("x = 1\ny = 2\n"), None),
            "<file path=\"src/app.py\" lines=\"9-10\">\n 9 | x = 1\n10 | y = 2\n</file>"
        );
        assert_eq!(file("a.py", (None, None), Some("a\r\nb"), None), "<file path=\"a.py\">\n1 | a\n2 | b\n</file>");
        assert_eq!(file("e.txt", (None, None), Some(""), None), "<file path=\"e.txt\">\n(empty)\n</file>");
        assert!(file("big", (Some(i64::MAX), None), Some("a\nb"), None).ends_with(" | b\n</file>"));
        assert_eq!(
            file("m.txt", (Some(3), Some(4)), None, Some("file not found")),
            "<file path=\"m.txt\" lines=\"3-4\" status=\"error\" error=\"file not found\"/>"
        );
        assert_eq!(
            file("p.txt", (None, None), None, None),
            "<file path=\"p.txt\" status=\"pending\" error=\"not read before the request was built\"/>"
        );
    }

    #[test]
    fn mcp_resources_say_what_they_hold() {
        let resource = |content: Option<&str>, blob: Option<&str>, status, error: Option<&str>| {
            mcp_text(&canonical::McpResourceBlock {
                server_name: "docs".into(),
                resource_uri: "docs://a".into(),
                content: content.map(Into::into),
                mime_type: Some("text/plain".into()),
                retrieved_at: None,
                blob: blob.map(Into::into),
                status,
                error: error.map(Into::into),
            })
        };
        let head = "<mcp_resource server=\"docs\" uri=\"docs://a\" mime_type=\"text/plain\"";
        assert_eq!(resource(Some("hi"), None, FileStatus::Resolved, None), format!("{head}>\nhi\n</mcp_resource>"));
        assert_eq!(
            resource(None, Some("iVBORw0KGgo="), FileStatus::Resolved, None),
            format!("{head}>\n(binary content, 8 bytes, not shown)\n</mcp_resource>")
        );
        assert_eq!(
            resource(None, None, FileStatus::Error, Some("boom")),
            format!("{head} status=\"error\" error=\"boom\"/>")
        );
        assert_eq!(
            resource(None, None, FileStatus::Pending, None),
            format!("{head} status=\"pending\" error=\"not retrieved before the request was built\"/>")
        );
    }
}
