//! Per-stream limits: memory stays bounded whatever a server sends.

/// 16 MiB: far above any real event or tool call, far below trouble.
pub const DEFAULT_SIZE_LIMIT: usize = 16 * 1024 * 1024;
/// Nesting allowed in parsed JSON (tool arguments, payloads).
pub const DEFAULT_MAX_DEPTH: usize = 200;

/// The limits of one stream; exceeding one is an error, never a silent truncation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest single SSE event (its data buffer) or NDJSON line payload, in bytes.
    pub max_event_size: usize,
    /// Longest line of the stream, in bytes.
    pub max_line_size: usize,
    /// Largest arguments of one tool call, in bytes.
    pub max_tool_args_size: usize,
    /// Deepest nesting of parsed JSON.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_event_size: DEFAULT_SIZE_LIMIT,
            max_line_size: DEFAULT_SIZE_LIMIT,
            max_tool_args_size: DEFAULT_SIZE_LIMIT,
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}
