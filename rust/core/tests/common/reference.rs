//! A spec-literal SSE parser (WHATWG HTML, "Parsing an event stream"), the reference the
//! conformance tests and the `sse` fuzz target compare msgwire's framer with. Only `std`: the
//! fuzz crate includes this file too (`#[path]`), so there is one reference.

/// What the reference parser observes: events as `(type, data, id, retry)`, the last event ID,
/// the reconnection time and the comment count.
pub type Reference = (Vec<(String, String, String, Option<u64>)>, String, Option<u64>, u64);

/// A spec-literal SSE parser over a whole body: decode everything (dropping one leading BOM),
/// split into lines character by character, interpret each line. Slow and obviously right.
pub fn reference(body: &[u8]) -> Reference {
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let text = String::from_utf8_lossy(body);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                lines.push(std::mem::take(&mut line));
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
            }
            '\n' => lines.push(std::mem::take(&mut line)),
            other => line.push(other),
        }
    }
    // What is left in `line` never ended: end of stream discards it.
    let (mut data, mut event, mut id_buffer, mut last_id) =
        (String::new(), String::new(), String::new(), String::new());
    let (mut retry, mut reconnection, mut comments) = (None, None, 0);
    let mut events = Vec::new();
    for line in lines {
        if line.is_empty() {
            last_id.clone_from(&id_buffer);
            if !data.is_empty() {
                data.pop();
                let kind = if event.is_empty() { "message".to_owned() } else { event.clone() };
                events.push((kind, data.clone(), last_id.clone(), retry));
            }
            data.clear();
            event.clear();
            retry = None;
            continue;
        }
        if line.starts_with(':') {
            comments += 1;
            continue;
        }
        let (name, value) = match line.split_once(':') {
            Some((name, value)) => (name, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_str(), ""),
        };
        match name {
            "event" => value.clone_into(&mut event),
            "data" => {
                data.push_str(value);
                data.push('\n');
            }
            "id" if !value.contains('\0') => value.clone_into(&mut id_buffer),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                let ms = value.parse::<u64>().unwrap_or(u64::MAX);
                retry = Some(ms);
                reconnection = Some(ms);
            }
            _ => {}
        }
    }
    (events, last_id, reconnection, comments)
}
