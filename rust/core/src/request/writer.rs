//! How each dialect writes a request: its target, its conversation array turn by turn, and the
//! body around that array.

use serde::Serialize;

use super::{Loss, Options, Plan, Target, Turns, anthropic, gemini, ollama, openai_chat, openai_responses, turns};
use crate::dialect::DialectName;
use crate::error::Error;

/// How a dialect writes a request: its abilities, its conversation array and the body around it.
#[derive(Clone, Copy)]
pub(crate) struct Writer {
    pub target: &'static Target,
    /// The conversation array's field (`messages`, `contents`, `input`).
    array: &'static str,
    /// The turns of the plan's items from an index on (see [`turns`]).
    turns: TurnsFn,
    /// The body with the conversation array empty: system prompt, tools, settings.
    body: BodyFn,
}

/// A dialect's writer of the turns of `plan`'s items from `from` on, the system prompt first when
/// from the start: `(plan, system, options, from, report, turns)`.
type TurnsFn =
    for<'p, 'o> fn(&Plan<'p>, Option<&str>, &Options<'o>, usize, &mut Vec<Loss>, &mut Turns) -> Result<(), Error>;

/// A dialect's writer of the body around its conversation array: `(system, options, report)`.
type BodyFn = for<'o> fn(Option<&str>, &Options<'o>, &mut Vec<Loss>) -> Result<Vec<u8>, Error>;

/// A build, with what the next one can resume from: the turns written and the writer's steps.
pub(crate) struct Built {
    /// The body (`turns.array`), and where each item began a turn in it.
    pub turns: Turns,
    pub plan_report: Vec<Loss>,
    pub writer_report: Vec<Loss>,
    pub body_report: Vec<Loss>,
}

impl Built {
    /// The report, in input order.
    pub fn report(&self) -> Vec<Loss> {
        turns::ordered(&self.plan_report, &self.writer_report, &self.body_report)
    }
}

/// Where a build resumes: at item `from`, after `turns` (of the items before it) and their steps.
pub(crate) struct Resume {
    pub from: usize,
    pub turns: Turns,
    pub writer_report: Vec<Loss>,
}

impl Writer {
    pub(crate) fn of(dialect: DialectName) -> Self {
        match dialect {
            DialectName::OpenAi => Self {
                target: &openai_chat::TARGET,
                array: openai_chat::ARRAY,
                turns: openai_chat::turns,
                body: openai_chat::body,
            },
            DialectName::Anthropic => Self {
                target: &anthropic::TARGET,
                array: anthropic::ARRAY,
                turns: anthropic::turns,
                body: anthropic::body,
            },
            DialectName::Ollama => {
                Self { target: &ollama::TARGET, array: ollama::ARRAY, turns: ollama::turns, body: ollama::body }
            }
            DialectName::Gemini => {
                Self { target: &gemini::TARGET, array: gemini::ARRAY, turns: gemini::turns, body: gemini::body }
            }
            DialectName::OpenAiResponses => Self {
                target: &openai_responses::TARGET,
                array: openai_responses::ARRAY,
                turns: openai_responses::turns,
                body: openai_responses::body,
            },
        }
    }

    /// The request of `plan` (whose steps are `plan_report`), from the start or resumed;
    /// `size` is the size of the canonical input (what the array is about to take).
    pub(crate) fn write(
        self,
        plan: &Plan<'_>,
        plan_report: Vec<Loss>,
        system: Option<&str>,
        options: &Options<'_>,
        resume: Option<Resume>,
        size: usize,
    ) -> Result<Built, Error> {
        let items = plan.items.len();
        let mut body_report = Vec::new();
        let skeleton = (self.body)(system, options, &mut body_report)?;
        let (head, tail) = skeleton.split_at(turns::array_at(&skeleton, self.array));
        // a build resumes after the same head (the same options write the same one)
        let resume = resume.filter(|r| r.turns.array.get(..r.turns.base) == Some(head));
        let Resume { from, mut turns, mut writer_report } = resume.unwrap_or_else(|| Resume {
            from: 0,
            turns: Turns::new(head, size + tail.len(), items),
            writer_report: Vec::new(),
        });
        (self.turns)(plan, system, options, from, &mut writer_report, &mut turns)?;
        if from > 0 && turns.written == 0 {
            // the last turn is a kept one: the rules about the request's end may change it
            return self.write(plan, plan_report, system, options, None, size);
        }
        turns.finish(tail);
        Ok(Built { turns, plan_report, writer_report, body_report })
    }
}

/// A conversation array written empty (the turns go between its brackets: see [`Turns`]).
pub(crate) struct EmptyArray;

impl Serialize for EmptyArray {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        serializer.serialize_seq(Some(0))?.end()
    }
}
