//! One provider stream, from bytes to the canonical message: framer, dialect and builder.
//!
//! `feed` takes chunks split anywhere and leaves the events they completed in the builder's
//! batch; `finish` ends the stream. Any failure (a limit, malformed JSON, an error the
//! provider sent, a truncated stream) is returned once and again on every later call, and
//! the message assembled so far stays readable, marked `stop_reason = error`.

use crate::assemble::{Builder, BuilderOptions};
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
        Self { name, framer, dialect: name.decoder(), builder, failure: None, ended: false, length: None }
    }

    pub fn dialect(&self) -> DialectName {
        self.name
    }

    pub fn builder(&self) -> &Builder {
        &self.builder
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
            Framer::Sse(parser) => parser.offset(),
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
            return Err(self.fail(Error::schema("bytes fed after the stream was finished", None)));
        }
        let Self { framer, dialect, builder, .. } = self;
        let result = match framer {
            Framer::Sse(parser) => parser.feed(chunk, |event| {
                builder.set_offset(event.data_offset);
                dialect.on_payload(event.event, event.data, builder)
            }),
            Framer::Ndjson(parser, limit_name) => parser
                .feed(chunk, |line| {
                    builder.set_offset(line.offset);
                    dialect.on_payload("", line.text, builder)
                })
                .map_err(|mut error| {
                    if let ErrorKind::Limit { name: name @ "max_line_size", .. } = &mut error.kind {
                        *name = limit_name;
                    }
                    error
                }),
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
        let Self { framer, dialect, builder, .. } = self;
        let result = match framer {
            Framer::Sse(parser) => {
                let end = parser.offset(); // before `finish`, which readies the parser for a new stream
                let pending = parser.finish();
                if let Some(offset) = pending.undispatched {
                    // The spec discards a block with no blank line after it; say so.
                    let message = "the last event had no blank line after it and was discarded";
                    builder.set_offset(offset);
                    builder.diagnostic("undispatched_event", message);
                }
                builder.set_offset(end);
                Ok(())
            }
            Framer::Ndjson(parser, _) => {
                let end = parser.offset();
                let last = parser.finish(|line| {
                    builder.set_offset(line.offset);
                    dialect.on_payload("", line.text, builder).map_err(|error| match error.kind {
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
