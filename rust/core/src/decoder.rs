//! One provider stream, from bytes to the canonical message: framer, dialect and builder.
//!
//! `feed` takes chunks split anywhere and leaves the events they completed in the builder's
//! batch; `finish` ends the stream. Any failure (a limit, malformed JSON, an error the
//! provider sent, a truncated stream) is returned once and again on every later call, and
//! the message assembled so far stays readable, marked `stop_reason = error`.

use crate::assemble::{Builder, BuilderOptions};
use crate::body::Sniff;
use crate::canonical::AssistantMessage;
use crate::dialect::{Dialect, DialectName, Framing};
use crate::error::{Error, ErrorKind};
use crate::event::EventSink;
use crate::ndjson::NdjsonParser;
use crate::sse::{SseLimits, SseParser};

enum Framer {
    Sse(SseParser),
    /// A line is one event, so one limit bounds both: the smaller, under its own name.
    Ndjson(NdjsonParser, &'static str),
}

/// Decodes one stream of one dialect.
pub struct StreamDecoder {
    name: DialectName,
    framer: Framer,
    dialect: Box<dyn Dialect + Send + Sync>,
    builder: Builder,
    /// Whether the body is a stream at all (a provider's JSON error, an HTML page...).
    sniff: Sniff,
    failure: Option<Error>,
    ended: bool,
    /// Bytes of the whole stream, once finished (`finish` readies the framer for a new stream).
    length: Option<u64>,
}

impl std::fmt::Debug for StreamDecoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamDecoder").field("dialect", &self.name).field("ended", &self.ended).finish_non_exhaustive()
    }
}

impl StreamDecoder {
    pub fn new(name: DialectName, options: BuilderOptions) -> Self {
        let builder = Builder::new(options);
        Self::with_builder(name, builder)
    }

    /// A decoder whose events go to `sink` (see `crate::transcode`) instead of a JSON batch.
    pub fn with_sink(name: DialectName, options: BuilderOptions, sink: Box<dyn EventSink>) -> Self {
        Self::with_builder(name, Builder::with_sink(options, Some(sink)))
    }

    fn with_builder(name: DialectName, builder: Builder) -> Self {
        let limits = *builder.limits();
        let framer = match name.framing() {
            Framing::Sse => Framer::Sse(SseParser::new(SseLimits {
                max_line_size: limits.max_line_size,
                max_event_size: limits.max_event_size,
            })),
            Framing::Ndjson => {
                let name =
                    if limits.max_event_size < limits.max_line_size { "max_event_size" } else { "max_line_size" };
                Framer::Ndjson(NdjsonParser::new(limits.max_line_size.min(limits.max_event_size)), name)
            }
        };
        let dialect = name.decoder();
        Self { name, framer, dialect, builder, sniff: Sniff::default(), failure: None, ended: false, length: None }
    }

    pub fn dialect(&self) -> DialectName {
        self.name
    }

    pub fn builder(&self) -> &Builder {
        &self.builder
    }

    /// The message, moved out for a caller done with the stream (`assemble`), so that it can be
    /// written and dropped before Python reads it: one copy of a large message less at the peak.
    /// The builder keeps an empty message.
    pub fn take_message(&mut self) -> AssistantMessage {
        self.builder.take_message()
    }

    /// The events written since the last call, as one JSON array.
    pub fn take_events(&mut self) -> Vec<u8> {
        self.builder.take_events()
    }

    /// Bytes of the stream fed so far.
    pub fn offset(&self) -> u64 {
        if let Some(length) = self.length {
            return length;
        }
        match &self.framer {
            Framer::Sse(parser) => parser.offset() + self.sniff.kept(),
            Framer::Ndjson(parser, _) => parser.offset(),
        }
    }

    /// The failure that ended the stream, if one did.
    pub fn failure(&self) -> Option<&Error> {
        self.failure.as_ref()
    }

    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// Decode the next bytes of the stream.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), Error> {
        if let Some(failure) = &self.failure {
            return Err(failure.clone());
        }
        if self.ended {
            // the caller's mistake, not the stream's: nothing is marked failed
            return Err(Error::usage("bytes fed after the stream was finished"));
        }
        let Self { framer, dialect, builder, sniff, .. } = self;
        let result = match framer {
            Framer::Sse(parser) => {
                let max_size = builder.limits().max_event_size;
                sniff.split(chunk, parser.offset() + sniff.kept(), max_size).and_then(|chunk| {
                    parser.feed(chunk, |event| {
                        sniff.dispatched = true;
                        builder.set_offset(event.data_offset);
                        dialect.on_payload(event.event, event.data, builder)
                    })
                })
            }
            Framer::Ndjson(parser, limit_name) => {
                sniff.note_head(chunk);
                parser
                    .feed(chunk, |line| {
                        builder.set_offset(line.offset);
                        let result = dialect.on_payload("", line.text, builder).map_err(|e| sniff.ndjson_error(e));
                        sniff.dispatched = true;
                        result
                    })
                    .map_err(|mut error| {
                        if let ErrorKind::Limit { name: name @ "max_line_size", .. } = &mut error.kind {
                            *name = limit_name;
                        }
                        error
                    })
            }
        };
        result.map_err(|error| self.fail(error))
    }

    /// The stream ended (EOF): decode what was left and check that the provider finished.
    pub fn finish(&mut self) -> Result<(), Error> {
        if let Some(failure) = &self.failure {
            return Err(failure.clone());
        }
        if self.ended {
            return Ok(());
        }
        self.ended = true;
        self.length = Some(self.offset());
        let end = self.offset(); // before `finish`, which readies the framer for a new stream
        let Self { name, framer, dialect, builder, sniff, .. } = self;
        let result = match framer {
            Framer::Sse(parser) => {
                let pending = parser.finish();
                if let Some(offset) = pending.undispatched {
                    // The spec discards a block with no blank line after it; say so.
                    let message = "the last event had no blank line after it and was discarded";
                    builder.set_offset(offset);
                    builder.diagnostic("undispatched_event", message);
                }
                let read = sniff.finish_sse(*name, dialect.as_mut(), builder);
                builder.set_offset(end);
                read
            }
            Framer::Ndjson(parser, _) => {
                let last = parser.finish(|line| {
                    builder.set_offset(line.offset);
                    let object = line.text.trim_start().starts_with('{');
                    dialect.on_payload("", line.text, builder).map_err(|error| match error.kind {
                        ErrorKind::Json { .. } | ErrorKind::JsonSyntax(_) if !object => sniff.ndjson_error(error),
                        // A last line without its LF that does not parse was cut, not malformed.
                        ErrorKind::Json { detail } => {
                            Error::truncated(format!("the last line was cut ({detail})"), end)
                        }
                        _ => error,
                    })
                });
                builder.set_offset(end);
                last.map(|_| ())
            }
        };
        let result = result.and_then(|()| dialect.on_end(builder));
        match result {
            Ok(()) => {
                builder.complete();
                Ok(())
            }
            Err(error) => Err(self.fail(error)),
        }
    }

    /// The source of the bytes failed (a network error, a closed connection): end the stream
    /// with the message kept as it is, marked as failed.
    pub fn abort(&mut self, error: Error) -> Error {
        self.ended = true;
        self.fail(error)
    }

    fn fail(&mut self, error: Error) -> Error {
        self.builder.mark_failed();
        self.builder.fail_output(&error);
        self.failure = Some(error.clone());
        error
    }
}
