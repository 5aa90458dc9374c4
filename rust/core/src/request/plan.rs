//! The plan: which messages a request sends, in which order, and with which tool-call ids.
//!
//! Every provider refuses a request whose tool calls and results do not pair up: OpenAI Chat
//! wants a `tool` message for each id of an assistant's `tool_calls`, right after it; Anthropic
//! a `tool_result` for each `tool_use`, first in the next user turn; Gemini a functionResponse
//! for each functionCall of the turn before; OpenAI Responses a `function_call_output` for each
//! `function_call`. A history does not always pair up (the user interrupted, a tool crashed,
//! the history was edited), so the plan makes it, once for every dialect:
//!
//! - `system_control` messages are never sent (by design, not reported); unknown messages are
//!   dropped (reported);
//! - a tool result answers the latest earlier assistant message holding a call with its
//!   `tool_call_id` (as `msgwire.context` defines it), and within it the first such call not
//!   answered yet; it is moved right after that message, the results in input order;
//! - a result that answers no call is dropped (reported): no provider accepts it. A result for
//!   a call already answered is dropped too (reported): the first one is sent;
//! - a call without a result gets a placeholder right after the real results of its message,
//!   in call order (where calls are sent without ids, the answers to the calls of one tool name
//!   go in call order: the provider pairs them by order): an error result whose text is `Options::missing_result` (reported, action
//!   `placeholder`). The last assistant message of the request gets them too: a request asks
//!   for a model reply, and every provider refuses unanswered calls wherever they stand. To
//!   send real results, run the calls and append their results before converting;
//! - each call is sent with an id the target accepts (see [`super::ids`]), and its results and
//!   placeholder with the same one;
//! - where the target needs a user turn first and the input opens with a user message, the
//!   request opens with one ([`keep_opening`], applied by the writer once it knows which
//!   messages were left with nothing to send).

use std::collections::HashMap;

use super::ids::{self, CallIds, CallSite};
use super::{Action, EMPTY_MESSAGE, Loss, Options, Refusals, Target};
use crate::canonical::{self, Block, Message, ToolCallBlock, ToolResultMessage};

/// A message to send, with its index in the input.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Item<'a> {
    User(usize, &'a canonical::UserMessage),
    Assistant(usize, &'a canonical::AssistantMessage),
    /// A tool result and the call it answers.
    ToolResult(usize, &'a ToolResultMessage, ToolCall<'a>),
    /// The placeholder of a call without a result.
    Missing(ToolCall<'a>),
}

/// A tool call, where it is in the input.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ToolCall<'a> {
    /// Index of the assistant message.
    pub message: usize,
    /// Index of the block in that message.
    pub block: usize,
    pub call: &'a ToolCallBlock,
}

/// The messages to send, and the id each call is sent with.
#[derive(Debug)]
pub(crate) struct Plan<'a> {
    pub items: Vec<Item<'a>>,
    /// The ids that are not the call's own, by `(message, block)`.
    rewritten: HashMap<(usize, usize), String>,
}

impl Plan<'_> {
    /// The id the call in block `block` of message `message` is sent with (`own` is its id).
    pub fn call_id<'s>(&'s self, message: usize, block: usize, own: &'s str) -> &'s str {
        self.rewritten.get(&(message, block)).map_or(own, String::as_str)
    }

    /// Whether any call is sent with an id that is not its own.
    pub fn rewrites(&self) -> bool {
        !self.rewritten.is_empty()
    }

    /// The id `call` is sent with, on the call, its results and its placeholder.
    pub fn id<'s>(&'s self, call: &ToolCall<'s>) -> &'s str {
        self.call_id(call.message, call.block, &call.call.id)
    }
}

/// The calls of one assistant message, which of them are answered, and by what.
struct Answers<'a> {
    calls: Vec<ToolCall<'a>>,
    answered: Vec<bool>,
    /// The results answering them, in input order: (result index, call index).
    results: Vec<(usize, usize)>,
}

/// The plan of `messages` for `target`: see the module documentation.
pub(crate) fn plan<'a>(
    messages: &[&'a Message],
    target: &Target,
    options: &Options<'_>,
    report: &mut Vec<Loss>,
) -> Plan<'a> {
    let mut calls: Vec<Option<Answers<'a>>> = Vec::with_capacity(messages.len());
    // The latest assistant message holding a call with each id.
    let mut owner: HashMap<&str, usize> = HashMap::with_capacity(messages.len());
    let carries = super::Carries::of(target.dialect);
    for (i, &message) in messages.iter().enumerate() {
        let mut own = None;
        unsent_fields(i, message, target.dialect, carries, report);
        match message {
            Message::Assistant(m) => {
                let mut list = Vec::new();
                for (b, block) in m.content.iter().enumerate() {
                    if let Block::ToolCall(call) = block {
                        owner.insert(call.id.as_str(), i);
                        list.push(ToolCall { message: i, block: b, call });
                    }
                }
                if !list.is_empty() {
                    let answered = vec![false; list.len()];
                    own = Some(Answers { calls: list, answered, results: Vec::new() });
                }
            }
            Message::ToolResult(r) => {
                let id = r.tool_call_id.as_str();
                let answers = owner.get(id).and_then(|&a| Some((a, calls[a].as_mut()?)));
                match answers {
                    None => report.push(dropped(i, "no earlier assistant message made this tool call".into())),
                    Some((a, c)) => {
                        if let Some(k) = (0..c.calls.len()).find(|&k| !c.answered[k] && c.calls[k].call.id == id) {
                            c.answered[k] = true;
                            c.results.push((i, k));
                        } else {
                            let reason =
                                format!("a second result for tool call {id:?} (message {a}): the first is sent");
                            report.push(dropped(i, reason));
                        }
                    }
                }
            }
            _ => {}
        }
        calls.push(own);
    }
    let mut items = Vec::with_capacity(messages.len());
    for (i, &message) in messages.iter().enumerate() {
        match message {
            Message::User(m) => items.push(Item::User(i, m)),
            Message::Assistant(m) => {
                items.push(Item::Assistant(i, m));
                let Some(c) = &calls[i] else { continue };
                // (call, result): the results in input order, then the placeholders in call order
                let mut slots: Vec<(usize, Option<usize>)> = c.results.iter().map(|&(j, k)| (k, Some(j))).collect();
                slots.extend((0..c.calls.len()).filter(|&k| !c.answered[k]).map(|k| (k, None)));
                in_call_order_without_ids(&mut slots, &c.calls, target.call_ids);
                for (k, result) in slots {
                    let call = c.calls[k];
                    if let Some((j, Message::ToolResult(r))) = result.map(|j| (j, messages[j])) {
                        items.push(Item::ToolResult(j, r, call));
                        continue;
                    }
                    items.push(Item::Missing(call));
                    report.push(Loss::new(
                        i,
                        Some(call.block),
                        "tool_result",
                        Action::Placeholder,
                        "no result for this tool call: an error result stands in for it",
                    ));
                }
            }
            Message::ToolResult(_) | Message::SystemControl(_) => {}
            Message::Unknown(_) => report.push(Loss::new(
                i,
                None,
                "unknown_message",
                Action::Drop,
                "a message of a type this version does not know",
            )),
        }
    }
    let sites: Vec<CallSite<'_>> = calls
        .iter()
        .flatten()
        .flat_map(|c| &c.calls)
        .map(|c| CallSite {
            message: c.message,
            block: c.block,
            message_id: match messages[c.message] {
                Message::Assistant(m) => m.id.as_str(),
                _ => "",
            },
            id: &c.call.id,
        })
        .collect();
    let rewritten = ids::assign(&sites, target.call_ids, options.tool_call_ids, report);
    Plan { items, rewritten }
}

/// Where calls are sent without ids (Ollama; Gemini for a call that came without one), the
/// provider pairs the results of one tool name with its calls by order: the answers to the
/// calls of a name that has a call without an id take their slots in call order (the others
/// stay where they are).
fn in_call_order_without_ids(slots: &mut [(usize, Option<usize>)], calls: &[ToolCall<'_>], ids: CallIds) {
    if slots.len() < 2 || slots.iter().all(|&(k, _)| ids::sent(ids, &calls[k].call.id)) {
        return; // every answer is paired by its id
    }
    let mut by_name: HashMap<&str, (bool, Vec<usize>)> = HashMap::new();
    for (n, &(k, _)) in slots.iter().enumerate() {
        let (unsent, positions) = by_name.entry(calls[k].call.name.as_str()).or_default();
        *unsent |= !ids::sent(ids, &calls[k].call.id);
        positions.push(n);
    }
    for (_, positions) in by_name.values().filter(|(unsent, p)| *unsent && p.len() > 1) {
        let mut answers: Vec<(usize, Option<usize>)> = positions.iter().map(|&n| slots[n]).collect();
        answers.sort_by_key(|&(k, _)| k);
        for (&n, answer) in positions.iter().zip(answers) {
            slots[n] = answer;
        }
    }
}

/// For a target that needs a user turn first ([`Refusals::non_user_opening`]): when the input
/// opens with a user message (the plan's first item) and the request written does not
/// (`opens_with_user` false: that message, and any user message right after it, were left with
/// nothing to send and dropped), the first one is sent after all, as [`EMPTY_MESSAGE`]: its drop
/// in `report` becomes a placeholder. Returns its index, for the writer to put that turn first.
pub(crate) fn keep_opening(
    plan: &Plan<'_>,
    refusals: Refusals,
    opens_with_user: bool,
    report: &mut [Loss],
) -> Option<usize> {
    let Some(&Item::User(i, _)) = plan.items.first() else { return None };
    if opens_with_user || !refusals.non_user_opening {
        return None;
    }
    let step =
        report.iter_mut().find(|l| (l.message, l.block, l.kind, l.action) == (i, None, "message", Action::Drop))?;
    step.action = Action::Placeholder;
    step.reason =
        format!("nothing left to send, but the request must open with a user turn: sent as {EMPTY_MESSAGE:?}").into();
    Some(i)
}

/// Report the message-level fields `dialect` does not carry: a participant name, a cache
/// breakpoint on a tool result.
fn unsent_fields(i: usize, message: &Message, dialect: &str, carries: super::Carries, report: &mut Vec<Loss>) {
    let name = match message {
        Message::User(m) => m.name.as_ref(),
        Message::Assistant(m) => m.name.as_ref(),
        _ => None,
    };
    if name.is_some() && !carries.names {
        report.push(Loss::new(i, None, "name", Action::Strip, format!("{dialect} messages have no participant name")));
    }
    if let Message::ToolResult(r) = message {
        if r.cache_control.is_some() && !carries.cache_control {
            report.push(Loss::new(
                i,
                None,
                "cache_control",
                Action::Strip,
                format!("{dialect} has no cache breakpoints"),
            ));
        }
    }
}

fn dropped(message: usize, reason: String) -> Loss {
    Loss::new(message, None, "tool_result", Action::Drop, reason)
}

#[cfg(test)]
mod tests {
    use super::super::{CallIds, IdFormat, MISSING_RESULT, to_request_json};
    use super::*;
    use crate::dialect::DialectName;

    fn messages(doc: &str) -> Vec<Message> {
        serde_json::from_str(doc).expect("reads")
    }

    const ANY: Target = Target {
        dialect: "test",
        provider: "test",
        thinking: false,
        signed: false,
        redacted: false,
        url_images: false,
        images: [false; 3],
        image_media_types: &[],
        call_ids: CallIds::Required(IdFormat::Anthropic),
        cites: None,
        server_tools: crate::request::ServerTools::Nowhere,
    };

    /// Each item as `(message, "u" | "a" | "r" | "-", call id sent)`.
    fn order(plan: &Plan<'_>) -> Vec<(usize, &'static str, String)> {
        plan.items
            .iter()
            .map(|item| match item {
                Item::User(i, _) => (*i, "u", String::new()),
                Item::Assistant(i, _) => (*i, "a", String::new()),
                Item::ToolResult(i, _, call) => (*i, "r", plan.id(call).to_owned()),
                Item::Missing(call) => (call.message, "-", plan.id(call).to_owned()),
            })
            .collect()
    }

    /// A report entry as `(message, block, kind, action)`.
    type Step = (usize, Option<usize>, &'static str, Action);

    fn steps(report: &[Loss]) -> Vec<Step> {
        report.iter().map(|l| (l.message, l.block, l.kind, l.action)).collect()
    }

    #[test]
    fn results_move_after_their_call_and_orphans_and_repeats_are_dropped() {
        let doc = messages(
            r#"[
            {"type":"tool_result","id":"r0","timestamp":"t","tool_call_id":"nope"},
            {"type":"assistant","id":"a","timestamp":"t","content":[{"type":"tool_call","id":"c1","name":"f"}]},
            {"type":"user","id":"u","timestamp":"t","content":[{"type":"text","text":"wait"}]},
            {"type":"system_control","id":"s","timestamp":"t","control":"x"},
            {"type":"tool_result","id":"r1","timestamp":"t","tool_call_id":"c1"},
            {"type":"tool_result","id":"r2","timestamp":"t","tool_call_id":"c1"},
            {"type":"hologram"}
        ]"#,
        );
        let mut report = Vec::new();
        let plan = plan(&doc.iter().collect::<Vec<_>>(), &ANY, &Options::default(), &mut report);
        assert_eq!(order(&plan), [(1, "a", String::new()), (4, "r", "c1".into()), (2, "u", String::new())]);
        assert_eq!(
            steps(&report),
            [
                (0, None, "tool_result", Action::Drop),
                (5, None, "tool_result", Action::Drop),
                (6, None, "unknown_message", Action::Drop)
            ]
        );
        assert!(report[1].reason.contains("second result"), "{}", report[1].reason);
    }

    #[test]
    fn a_result_answers_the_latest_assistant_message_with_its_call() {
        // a2 comes between a1 and the result of a1's call; a3 makes the call c2 again
        let doc = messages(
            r#"[
            {"type":"assistant","id":"a1","timestamp":"t","content":[
                {"type":"tool_call","id":"c1","name":"f"},{"type":"tool_call","id":"c2","name":"g"}]},
            {"type":"assistant","id":"a2","timestamp":"t","content":[{"type":"text","text":"still here"}]},
            {"type":"tool_result","id":"r1","timestamp":"t","tool_call_id":"c1"},
            {"type":"assistant","id":"a3","timestamp":"t","content":[{"type":"tool_call","id":"c2","name":"g"}]},
            {"type":"tool_result","id":"r2","timestamp":"t","tool_call_id":"c2"}
        ]"#,
        );
        let mut report = Vec::new();
        let plan = plan(&doc.iter().collect::<Vec<_>>(), &ANY, &Options::default(), &mut report);
        let got = order(&plan);
        let kinds: Vec<(usize, &str)> = got.iter().map(|(i, k, _)| (*i, *k)).collect();
        assert_eq!(kinds, [(0, "a"), (2, "r"), (0, "-"), (1, "a"), (3, "a"), (4, "r")]);
        // a1's c2 keeps its id; a3's c2 repeats it, so a3's call and its result get a new one
        assert_eq!((got[1].2.as_str(), got[2].2.as_str()), ("c1", "c2"));
        assert_ne!(got[5].2, "c2");
        assert_eq!(plan.call_id(3, 0, "c2"), got[5].2);
        assert_eq!(
            steps(&report),
            [(0, Some(1), "tool_result", Action::Placeholder), (3, Some(0), "tool_call_id", Action::Rewrite)]
        );
    }

    #[test]
    fn every_call_without_a_result_gets_a_placeholder_after_the_real_ones() {
        let doc = messages(
            r#"[
            {"type":"user","id":"u","timestamp":"t","content":[{"type":"text","text":"go"}]},
            {"type":"assistant","id":"a1","timestamp":"t","content":[
                {"type":"tool_call","id":"c1","name":"f"},{"type":"tool_call","id":"c2","name":"g"},
                {"type":"tool_call","id":"c3","name":"h"}]},
            {"type":"tool_result","id":"r2","timestamp":"t","tool_call_id":"c2"},
            {"type":"user","id":"u2","timestamp":"t","content":[{"type":"text","text":"stop"}]},
            {"type":"assistant","id":"a2","timestamp":"t","content":[{"type":"tool_call","id":"c4","name":"f"}]}
        ]"#,
        );
        let mut report = Vec::new();
        let plan = plan(&doc.iter().collect::<Vec<_>>(), &ANY, &Options::default(), &mut report);
        let got: Vec<(usize, &str, &str)> =
            order(&plan).into_iter().map(|(i, k, id)| (i, k, id.leak() as &str)).collect();
        assert_eq!(
            got,
            [
                (0, "u", ""),
                (1, "a", ""),
                (2, "r", "c2"),
                (1, "-", "c1"),
                (1, "-", "c3"),
                (3, "u", ""),
                (4, "a", ""),
                (4, "-", "c4")
            ]
        );
        let placeholders: Vec<_> = report.iter().filter(|l| l.action == Action::Placeholder).collect();
        assert_eq!(placeholders.len(), 3);
    }

    #[test]
    fn without_ids_the_answers_to_one_tool_go_in_call_order() {
        // two calls of f (no ids sent to Ollama), answered in the other order, and g between
        let doc = messages(
            r#"[
            {"type":"assistant","id":"a","timestamp":"t","content":[{"type":"tool_call","id":"c1","name":"f"},
                {"type":"tool_call","id":"c2","name":"g"},{"type":"tool_call","id":"c3","name":"f"}]},
            {"type":"tool_result","id":"r3","timestamp":"t","tool_call_id":"c3"},
            {"type":"tool_result","id":"r2","timestamp":"t","tool_call_id":"c2"},
            {"type":"tool_result","id":"r1","timestamp":"t","tool_call_id":"c1"}
        ]"#,
        );
        let answers = |ids: CallIds| {
            let target = Target { call_ids: ids, ..ANY };
            let plan = plan(&doc.iter().collect::<Vec<_>>(), &target, &Options::default(), &mut Vec::new());
            order(&plan).into_iter().skip(1).map(|(i, _, _)| i).collect::<Vec<_>>()
        };
        assert_eq!(answers(CallIds::Unsent), [3, 2, 1], "f's results in call order, g's where it was");
        assert_eq!(answers(CallIds::Required(IdFormat::OpenAi)), [1, 2, 3], "paired by id: input order");
        // a placeholder takes the slot of its call too
        let unanswered = &doc[..3];
        let target = Target { call_ids: CallIds::Unsent, ..ANY };
        let plan = plan(&unanswered.iter().collect::<Vec<_>>(), &target, &Options::default(), &mut Vec::new());
        let got: Vec<(usize, &str)> = order(&plan).into_iter().map(|(i, k, _)| (i, k)).collect();
        assert_eq!(got, [(0, "a"), (0, "-"), (2, "r"), (1, "r")]);
    }

    #[test]
    fn placeholders_carry_the_text_and_the_error_flag_in_every_dialect() {
        let doc = br#"[
            {"type":"user","id":"u","timestamp":"t","content":[{"type":"text","text":"go"}]},
            {"type":"assistant","id":"a","timestamp":"t","content":[{"type":"tool_call","id":"functions.f:0","name":"f"}]}
        ]"#;
        let expected = [
            (
                DialectName::OpenAi,
                r#"{"role":"tool","tool_call_id":"functions.f:0","content":"No result: this tool call was not completed."}"#,
            ),
            (DialectName::Anthropic, r#"{"type":"tool_result","tool_use_id":"call_"#),
            (
                DialectName::Gemini,
                r#"{"functionResponse":{"name":"f","id":"functions.f:0","response":{"error":"No result: this tool call was not completed."}}}"#,
            ),
            (
                DialectName::OpenAiResponses,
                r#"{"type":"function_call_output","call_id":"functions.f:0","output":"No result: this tool call was not completed."}"#,
            ),
            (
                DialectName::Ollama,
                r#"{"role":"tool","content":"No result: this tool call was not completed.","tool_name":"f"}"#,
            ),
        ];
        for (dialect, part) in expected {
            let converted = to_request_json(doc, dialect, &Options::default()).expect("converts");
            let body = String::from_utf8(converted.body).expect("utf-8");
            assert!(body.contains(part), "{}: {body}", dialect.as_str());
            assert!(body.contains(MISSING_RESULT), "{}: {body}", dialect.as_str());
            assert_eq!(converted.report.iter().filter(|l| l.action == Action::Placeholder).count(), 1);
        }
        let anthropic = to_request_json(doc, DialectName::Anthropic, &Options::default()).expect("converts");
        let body = String::from_utf8(anthropic.body).expect("utf-8");
        assert!(
            body.contains(r#""content":"No result: this tool call was not completed.","is_error":true}"#),
            "{body}"
        );
        let options = Options { missing_result: Some("interrupted".into()), ..Options::default() };
        let custom = to_request_json(doc, DialectName::OpenAi, &options).expect("converts");
        let body = String::from_utf8(custom.body).expect("utf-8");
        assert!(
            body.ends_with(r#"{"role":"tool","tool_call_id":"functions.f:0","content":"interrupted"}]}"#),
            "{body}"
        );
    }

    #[test]
    fn ids_are_rewritten_on_the_call_and_its_results_alike() {
        let doc = br#"[
            {"type":"user","id":"u","timestamp":"t","content":[{"type":"text","text":"go"}]},
            {"type":"assistant","id":"a","timestamp":"t","content":[{"type":"tool_call","id":"functions.f:0","name":"f"}]},
            {"type":"tool_result","id":"r","timestamp":"t","tool_call_id":"functions.f:0","content":[{"type":"text","text":"ok"}]}
        ]"#;
        let anthropic = to_request_json(doc, DialectName::Anthropic, &Options::default()).expect("converts");
        let body: serde_json::Value = serde_json::from_slice(&anthropic.body).expect("json");
        let id = &body["messages"][1]["content"][0]["id"];
        assert_eq!(id, &body["messages"][2]["content"][0]["tool_use_id"]);
        assert!(id.as_str().is_some_and(|id| IdFormat::Anthropic.accepts(id)), "{id}");
        assert_eq!(steps(&anthropic.report), [(1, Some(0), "tool_call_id", Action::Rewrite)]);
        // OpenAI takes the id; Mistral, behind the openai dialect, does not
        let openai = to_request_json(doc, DialectName::OpenAi, &Options::default()).expect("converts");
        assert!(openai.report.is_empty());
        let mistral = Options { tool_call_ids: Some(IdFormat::Mistral), ..Options::default() };
        let converted = to_request_json(doc, DialectName::OpenAi, &mistral).expect("converts");
        let body: serde_json::Value = serde_json::from_slice(&converted.body).expect("json");
        let id = &body["messages"][1]["tool_calls"][0]["id"];
        assert_eq!(id, &body["messages"][2]["tool_call_id"]);
        assert!(id.as_str().is_some_and(|id| IdFormat::Mistral.accepts(id)), "{id}");
        let again = to_request_json(doc, DialectName::OpenAi, &mistral).expect("converts");
        assert_eq!(converted.body, again.body, "deterministic");
    }

    #[test]
    fn options_read_the_new_fields() {
        let options = Options::from_json(br#"{"missing_result":"gone","tool_call_ids":"mistral"}"#).expect("reads");
        assert_eq!((options.missing_result(), options.tool_call_ids), ("gone", Some(IdFormat::Mistral)));
        assert_eq!(Options::default().missing_result(), MISSING_RESULT);
        assert!(Options::from_json(br#"{"tool_call_ids":"cohere"}"#).is_err());
    }

    // --- empty content ---------------------------------------------------------------------------

    /// The body of `doc` for `dialect` as JSON, and its report as `(message, block, kind, action)`.
    fn converted(doc: &str, dialect: DialectName, options: &Options<'_>) -> (serde_json::Value, Vec<Step>) {
        let converted = to_request_json(doc.as_bytes(), dialect, options).expect("converts");
        (serde_json::from_slice(&converted.body).expect("json"), steps(&converted.report))
    }

    fn text(id: &str, kind: &str, text: &str) -> String {
        format!(r#"{{"type":"{kind}","id":"{id}","timestamp":"t","content":[{{"type":"text","text":{text:?}}}]}}"#)
    }

    #[test]
    fn which_text_each_rule_refuses() {
        use super::super::EmptyText;
        for blank in ["", " ", "\n\t\r", "\u{a0}\u{2028}\u{3000}", "\u{1c}\u{1f}", "\u{feff}"] {
            assert!(EmptyText::BlankRefused.refuses(blank), "{blank:?}");
        }
        for text in ["a", " a ", "\u{200b}", "."] {
            assert!(!EmptyText::BlankRefused.refuses(text), "{text:?}");
        }
        assert!(EmptyText::Refused.refuses(""));
        assert!(!EmptyText::Refused.refuses(" "));
        assert!(!EmptyText::Sent.refuses(""));
    }

    #[test]
    fn empty_text_is_left_out_where_refused_and_the_messages_it_empties_are_dropped() {
        let doc = format!(
            r#"[{}, {},
            {{"type":"assistant","id":"a1","timestamp":"t","content":[{{"type":"text","text":""}},{{"type":"text","text":" "}}]}},
            {},
            {{"type":"assistant","id":"a2","timestamp":"t","content":[{{"type":"text","text":""}},{{"type":"tool_call","id":"c1","name":"f"}}]}},
            {{"type":"tool_result","id":"r","timestamp":"t","tool_call_id":"c1","content":[{{"type":"text","text":" "}}]}}]"#,
            text("u0", "user", ""),
            text("u1", "user", "q"),
            text("u3", "user", " "),
        );
        let options = Options::default();
        // Anthropic: blank text nowhere; the empty messages dropped, the turns around them merged
        let (body, report) = converted(&doc, DialectName::Anthropic, &options);
        assert_eq!(
            body["messages"],
            serde_json::json!([
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "f", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1"}]}
            ])
        );
        let drop = |i| (i, None, "message", Action::Drop);
        assert_eq!(report, [drop(0), drop(2), drop(3)], "the blank blocks themselves are not reported");
        // Gemini: only "" is refused; whitespace is text
        let (body, report) = converted(&doc, DialectName::Gemini, &options);
        assert_eq!(
            body["contents"],
            serde_json::json!([
                {"role": "user", "parts": [{"text": "q"}]},
                {"role": "model", "parts": [{"text": " "}]},
                {"role": "user", "parts": [{"text": " "}]},
                {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}, "id": "c1"}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "f", "id": "c1", "response": {"result": " "}}}]}
            ])
        );
        assert_eq!(report, [drop(0)]);
        // OpenAI Chat, Responses, Ollama take empty text: nothing changes
        for dialect in [DialectName::OpenAi, DialectName::OpenAiResponses, DialectName::Ollama] {
            let (body, report) = converted(&doc, dialect, &options);
            assert!(report.is_empty(), "{}: {report:?}", dialect.as_str());
            let first = if dialect == DialectName::OpenAiResponses { &body["input"][0] } else { &body["messages"][0] };
            let content = &first["content"];
            assert!(content == "" || content[0]["text"] == "", "{}: {first}", dialect.as_str());
        }
    }

    #[test]
    fn an_opening_user_message_left_empty_is_kept_where_the_target_needs_one() {
        let placeholder = |i| (i, None, "message", Action::Placeholder);
        let drop = |i| (i, None, "message", Action::Drop);
        let opening =
            format!("[{}, {}, {}]", text("u0", "user", ""), text("a", "assistant", "hi"), text("u1", "user", "go"));
        let (body, report) = converted(&opening, DialectName::Anthropic, &Options::default());
        assert_eq!(body["messages"][0], serde_json::json!({"role": "user", "content": EMPTY_MESSAGE}));
        assert_eq!(body["messages"].as_array().map(Vec::len), Some(3));
        assert_eq!(report, [placeholder(0)]);
        let (body, report) = converted(&opening, DialectName::Gemini, &Options::default());
        assert_eq!(body["contents"][0], serde_json::json!({"role": "user", "parts": [{"text": EMPTY_MESSAGE}]}));
        assert_eq!(report, [placeholder(0)]);
        // several empty ones: the first is kept, the others dropped
        let two =
            format!("[{}, {}, {}]", text("u0", "user", " "), text("u1", "user", ""), text("a", "assistant", "hi"));
        let (body, report) = converted(&two, DialectName::Anthropic, &Options::default());
        assert_eq!(body["messages"][0]["content"], EMPTY_MESSAGE);
        assert_eq!(report, [placeholder(0), drop(1)]);
        // the only message: a request with none is refused too
        let (body, report) =
            converted(&format!("[{}]", text("u", "user", "")), DialectName::Gemini, &Options::default());
        assert_eq!(body["contents"], serde_json::json!([{"role": "user", "parts": [{"text": EMPTY_MESSAGE}]}]));
        assert_eq!(report, [placeholder(0)]);
        // a user message right after it opens the request: the empty one is dropped
        let next =
            format!("[{}, {}, {}]", text("u0", "user", ""), text("u1", "user", "go"), text("a", "assistant", "hi"));
        let (body, report) = converted(&next, DialectName::Anthropic, &Options::default());
        assert_eq!(body["messages"][0], serde_json::json!({"role": "user", "content": "go"}));
        assert_eq!(report, [drop(0)]);
        // an input that opens with the model's turn is sent as it is: no user message is made up
        let late = format!("[{}, {}]", text("a", "assistant", "hi"), text("u", "user", ""));
        let (body, report) = converted(&late, DialectName::Anthropic, &Options::default());
        assert_eq!(body["messages"], serde_json::json!([{"role": "assistant", "content": "hi"}]));
        assert_eq!(report, [drop(1)]);
        // OpenAI takes an empty user message, and a conversation opening otherwise
        let (body, report) = converted(&opening, DialectName::OpenAi, &Options::default());
        assert_eq!(body["messages"][0], serde_json::json!({"role": "user", "content": ""}));
        assert!(report.is_empty());
    }

    #[test]
    fn blank_results_system_prompts_and_placeholders_leave_their_text_out() {
        let doc = r#"[{"type":"user","id":"u","timestamp":"t","content":[{"type":"text","text":"go"}]},
            {"type":"assistant","id":"a","timestamp":"t","content":[{"type":"tool_call","id":"c1","name":"f"},
                {"type":"tool_call","id":"c2","name":"g"},{"type":"tool_call","id":"c3","name":"h"}]},
            {"type":"tool_result","id":"r1","timestamp":"t","tool_call_id":"c1","content":[{"type":"text","text":""}],
                "error":{"message":"boom"},"is_error":true},
            {"type":"tool_result","id":"r2","timestamp":"t","tool_call_id":"c2","content":[],"error":{"message":" "}}]"#;
        let options = Options {
            system_prompt: Some(" ".into()),
            missing_result: Some(String::new().into()),
            ..Options::default()
        };
        let (body, _) = converted(doc, DialectName::Anthropic, &options);
        assert_eq!(body.get("system"), None, "a blank system prompt is left out");
        assert_eq!(
            body["messages"][2]["content"],
            serde_json::json!([
                {"type": "tool_result", "tool_use_id": "c1", "content": "boom", "is_error": true},
                {"type": "tool_result", "tool_use_id": "c2"},
                {"type": "tool_result", "tool_use_id": "c3", "is_error": true}
            ])
        );
        let (body, _) =
            converted(doc, DialectName::Gemini, &Options { system_prompt: Some("".into()), ..options.clone() });
        assert_eq!(body.get("systemInstruction"), None, "an empty system prompt is left out");
        let (body, _) = converted(doc, DialectName::Gemini, &options);
        assert_eq!(body["systemInstruction"], serde_json::json!({"parts": [{"text": " "}]}));
        // a result's text is a value in Gemini's `response` object: it may be empty
        let responses: Vec<_> = body["contents"][2]["parts"].as_array().into_iter().flatten().collect();
        assert_eq!(responses[2]["functionResponse"]["response"], serde_json::json!({"error": ""}));
        let (body, _) = converted(doc, DialectName::OpenAi, &options);
        assert_eq!(body["messages"][0], serde_json::json!({"role": "system", "content": " "}));
        let tools: Vec<_> =
            body["messages"].as_array().into_iter().flatten().skip(3).map(|m| m["content"].as_str()).collect();
        // OpenAI takes empty text: the result's own "" is sent, not its error message
        assert_eq!(tools, [Some(""), Some(" "), Some("")]);
    }

    #[test]
    fn a_gemini_signature_keeps_its_empty_text_part() {
        let doc = r#"[{"type":"user","id":"u","timestamp":"t","content":[{"type":"text","text":"q"}]},
            {"type":"assistant","id":"a","timestamp":"t","provider":"gemini","content":[{"type":"text","text":"42"},
                {"type":"thinking","thinking":"","signature":"SIG"},{"type":"text","text":""}]}]"#;
        let (body, report) = converted(doc, DialectName::Gemini, &Options::default());
        assert_eq!(
            body["contents"][1]["parts"],
            serde_json::json!([{"text": "42"}, {"text": "", "thoughtSignature": "SIG"}])
        );
        assert!(report.is_empty(), "{report:?}");
    }
}
