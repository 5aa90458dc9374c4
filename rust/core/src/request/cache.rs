//! Re-building the request of a growing conversation: [`RequestCache`].
//!
//! An agent loop sends its whole history at every step; between two steps the history grew by
//! a message or two. The cache keeps, per message content, the message read, and per dialect
//! and options, the last request written: its conversation array, turn by turn, and where each
//! plan item began a turn. A build then reads only the messages it has not seen, runs the plan
//! over the whole history (it moves results, adds placeholders and rewrites repeated ids across
//! it: cheap, and it decides what each item lowers to), and writes again only from the first item
//! that differs from the last build: the turns before it are the same bytes, since what an item
//! lowers to depends only on its message, the call ids the plan gave it (and the call it
//! answers), the dialect and the options, all in its [`ItemKey`].
//!
//! Messages are keyed by their content (a 128-bit hash of their canonical JSON, [`content_key`]),
//! never by their id alone: an approval or an edit keeps the message's id and changes its
//! content. The bytes are those of a full build ([`super::to_request_json`]): the same code
//! writes both, from the start or resumed.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::{BuildHasherDefault, DefaultHasher, Hash, Hasher};

use super::{Converted, Item, Loss, Options, Plan, Resume, Writer, plan};
use crate::canonical::{self, Message};
use crate::dialect::DialectName;
use crate::error::Error;

/// A message's content key: a 128-bit hash of its canonical JSON.
pub type Key = u128;

/// The content key of a message's canonical JSON (two SipHash-1-3 passes: 128 bits, so two
/// different messages never share one in practice).
pub fn content_key(json: &[u8]) -> Key {
    let half = |salt: u64| {
        let mut hasher = DefaultHasher::new();
        salt.hash(&mut hasher);
        hasher.write(json);
        hasher.finish()
    };
    (u128::from(half(0x6d73_6777_6972_6531)) << 64) | u128::from(half(0x6d73_6777_6972_6532))
}

/// How many (dialect, options) builds are kept: a conversation is sent to a provider or two, each
/// dialect at most, with one set of options or two.
const BUILDS: usize = 8;

/// The hasher of content keys: they are hashes already, so half of one is the table's hash.
#[derive(Debug, Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    #[allow(clippy::cast_possible_truncation)] // the low half of a hash
    fn write_u128(&mut self, key: u128) {
        self.0 = key as u64;
    }
}

/// What was read and written for a conversation, to re-build its request after it grew.
#[derive(Debug, Default)]
pub struct RequestCache {
    /// Messages read, by content key.
    messages: HashMap<Key, Message, BuildHasherDefault<KeyHasher>>,
    /// The last builds, the latest last.
    builds: Vec<Previous>,
}

/// A build kept: for which dialect and options, its items, its turns and the writer's steps.
#[derive(Debug)]
struct Previous {
    dialect: DialectName,
    options: Vec<u8>,
    items: Vec<ItemKey>,
    /// The body, and where each item began a turn in it.
    turns: super::Turns,
    writer_report: Vec<Loss>,
}

/// What an item's turns depend on besides the dialect and the options: its kind, the message it
/// sends (index and content), the call it answers (message, block, content of that message) and
/// the ids the plan sends its calls with when they are not their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ItemKey {
    kind: u8,
    message: usize,
    content: Key,
    call: (usize, usize),
    call_content: Key,
    rewritten: u64,
}

impl RequestCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// How many messages are kept read.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// The request of `messages` (each its content key and canonical JSON; the JSON is read
    /// only when the key is new) for `dialect`, with `options` (their JSON, as
    /// [`Options::from_json`] reads it; the system prompt is in them). The same bytes and report
    /// as [`super::to_request_json`] of the same messages.
    pub fn to_request_json(
        &mut self,
        messages: &[(Key, &[u8])],
        dialect: DialectName,
        options: Option<&[u8]>,
    ) -> Result<Converted, Error> {
        let written = self.write(messages, dialect, options, true)?;
        Ok(Converted { body: written.body.to_vec(), report: written.report })
    }

    /// The error a full build of `messages` (as the array `[m0,m1,...]`) gives, if it fails.
    fn full_build_error(messages: &[(Key, &[u8])], dialect: DialectName, options: &Options) -> Option<Error> {
        let mut array = b"[".to_vec();
        for (n, (_, json)) in messages.iter().enumerate() {
            if n > 0 {
                array.push(b',');
            }
            array.extend_from_slice(json);
        }
        array.push(b']');
        super::to_request_json(&array, dialect, options).err()
    }

    /// [`Self::to_request_json`], the body borrowed from the cache (to be copied once, where it
    /// goes), the report only when `report` (else empty).
    pub fn write(
        &mut self,
        messages: &[(Key, &[u8])],
        dialect: DialectName,
        options: Option<&[u8]>,
        report: bool,
    ) -> Result<Written<'_>, Error> {
        let options_json = options.unwrap_or_default();
        let options = if options_json.is_empty() { Options::default() } else { Options::from_json(options_json)? };
        for &(key, json) in messages {
            if let Entry::Vacant(entry) = self.messages.entry(key) {
                let read = canonical::read_tag_first(json, |input, text| {
                    canonical::parse::<Message>(input, text).map_err(|e| Error::from_serde(&e, input))
                });
                match read {
                    Ok(message) => entry.insert(message),
                    // rare: the full build of the array names the error as it always does
                    // (its offset in the array, not in one message)
                    Err(error) => return Err(Self::full_build_error(messages, dialect, &options).unwrap_or(error)),
                };
            }
        }
        let Self { messages: read, builds } = self;
        let refs: Vec<&Message> = messages.iter().filter_map(|(key, _)| read.get(key)).collect();
        let keys: Vec<Key> = messages.iter().map(|&(key, _)| key).collect();
        let writer = Writer::of(dialect);
        let mut plan_report = Vec::new();
        let plan = plan(&refs, writer.target, &options, &mut plan_report);
        let items = item_keys(&plan, &keys);
        let previous = builds.iter().position(|b| b.dialect == dialect && b.options == options_json);
        let resume = previous.and_then(|at| resume(builds.remove(at), &items));
        let system = options.system_prompt.as_deref();
        let size = messages.iter().map(|(_, json)| json.len()).sum();
        let built = writer.write(&plan, plan_report, system, &options, resume, size)?;
        let report = if report { built.report() } else { Vec::new() };
        // forget the messages this conversation no longer has (an edit, a fork elsewhere)
        if read.len() > 2 * messages.len() + 64 {
            let used: std::collections::HashSet<Key> = keys.into_iter().collect();
            read.retain(|key, _| used.contains(key));
        }
        if builds.len() >= BUILDS {
            builds.remove(0);
        }
        builds.push(Previous {
            dialect,
            options: options_json.to_vec(),
            items,
            turns: built.turns,
            writer_report: built.writer_report,
        });
        Ok(Written { body: &builds[builds.len() - 1].turns.array, report })
    }
}

/// A request written by [`RequestCache::write`].
#[derive(Debug)]
pub struct Written<'c> {
    pub body: &'c [u8],
    pub report: Vec<Loss>,
}

/// Where `previous` lets a build of `items` resume: at the last item that began a turn among the
/// items both builds share (from the first on), after the turns written before it.
fn resume(previous: Previous, items: &[ItemKey]) -> Option<Resume> {
    let shared = previous.items.iter().zip(items).take_while(|(a, b)| a == b).count();
    let from = (1..shared).rev().find(|&k| previous.turns.starts[k].is_some())?;
    let start = previous.turns.starts[from]?;
    let Previous { turns, mut writer_report, .. } = previous;
    let mut array = turns.array;
    array.truncate(start.offset);
    let mut starts = turns.starts;
    starts.truncate(from);
    writer_report.truncate(start.report);
    Some(Resume { from, turns: super::Turns::resume(array, turns.base, starts, items.len()), writer_report })
}

/// The key of each item of `plan` (`keys`: the content key of each message).
fn item_keys(plan: &Plan<'_>, keys: &[Key]) -> Vec<ItemKey> {
    plan.items
        .iter()
        .map(|item| match *item {
            Item::User(i, _) => {
                ItemKey { kind: 0, message: i, content: keys[i], call: (0, 0), call_content: 0, rewritten: 0 }
            }
            Item::Assistant(i, m) => {
                let mut rewritten = 0;
                if plan.rewrites() {
                    let mut hasher = DefaultHasher::new();
                    for (b, block) in m.content.iter().enumerate() {
                        if let canonical::Block::ToolCall(call) = block {
                            plan.call_id(i, b, &call.id).hash(&mut hasher);
                        }
                    }
                    rewritten = hasher.finish();
                }
                ItemKey { kind: 1, message: i, content: keys[i], call: (0, 0), call_content: 0, rewritten }
            }
            Item::ToolResult(i, _, call) => ItemKey {
                kind: 2,
                message: i,
                content: keys[i],
                call: (call.message, call.block),
                call_content: keys[call.message],
                rewritten: sent_id(plan, &call),
            },
            Item::Missing(call) => ItemKey {
                kind: 3,
                message: call.message,
                content: 0,
                call: (call.message, call.block),
                call_content: keys[call.message],
                rewritten: sent_id(plan, &call),
            },
        })
        .collect()
}

/// A hash of the id `call` is sent with, when the plan rewrote it (0 when it is its own).
fn sent_id(plan: &Plan<'_>, call: &super::plan::ToolCall<'_>) -> u64 {
    if !plan.rewrites() {
        return 0;
    }
    let mut hasher = DefaultHasher::new();
    plan.id(call).hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::to_request_json as full;

    fn user(id: &str, text: &str) -> String {
        format!(r#"{{"type":"user","id":"{id}","timestamp":"t","content":[{{"type":"text","text":"{text}"}}]}}"#)
    }

    fn call(id: &str, call: &str) -> String {
        format!(
            r#"{{"type":"assistant","id":"{id}","timestamp":"t","content":[{{"type":"tool_call","id":"{call}","name":"f","arguments":"{{}}"}}]}}"#
        )
    }

    fn result(id: &str, call: &str, text: &str) -> String {
        format!(
            r#"{{"type":"tool_result","id":"{id}","timestamp":"t","tool_call_id":"{call}","content":[{{"type":"text","text":"{text}"}}]}}"#
        )
    }

    /// The cache's build of `history` and a full build of it, for every dialect.
    fn both(cache: &mut RequestCache, history: &[String]) {
        let keyed: Vec<(Key, &[u8])> = history.iter().map(|m| (content_key(m.as_bytes()), m.as_bytes())).collect();
        let array = format!("[{}]", history.join(","));
        for dialect in [
            DialectName::OpenAi,
            DialectName::Anthropic,
            DialectName::Gemini,
            DialectName::OpenAiResponses,
            DialectName::Ollama,
        ] {
            let options = br#"{"system_prompt":"be brief"}"#;
            let cached = cache.to_request_json(&keyed, dialect, Some(options)).expect("converts");
            let expected =
                full(array.as_bytes(), dialect, &Options::from_json(options).expect("reads")).expect("converts");
            assert_eq!(String::from_utf8_lossy(&cached.body), String::from_utf8_lossy(&expected.body), "{dialect:?}");
            assert_eq!(cached.report, expected.report, "{dialect:?}");
        }
    }

    /// A message the core cannot read fails at the same offset as in a full build of the array.
    #[test]
    fn a_bad_message_fails_where_a_full_build_fails() {
        let history = [user("u1", "hi"), r#"{"type":"user","id":"u2","timestamp":"t","content":7}"#.to_owned()];
        let keyed: Vec<(Key, &[u8])> = history.iter().map(|m| (content_key(m.as_bytes()), m.as_bytes())).collect();
        let array = format!("[{}]", history.join(","));
        let cached = RequestCache::new().to_request_json(&keyed, DialectName::OpenAi, None).expect_err("bad content");
        let expected = full(array.as_bytes(), DialectName::OpenAi, &Options::default()).expect_err("bad content");
        assert_eq!(cached.offset, expected.offset);
        assert!(cached.offset.is_some_and(|at| at > history[0].len()), "{cached:?}");
    }

    #[test]
    fn a_growing_history_edited_in_place_builds_as_from_scratch() {
        let mut cache = RequestCache::new();
        let mut history = vec![user("u1", "hi"), call("a1", "c1")];
        both(&mut cache, &history); // the call's placeholder
        history.push(result("r1", "c1", "one"));
        both(&mut cache, &history); // the placeholder replaced by the result
        history.push(user("u2", "next"));
        history.push(call("a2", "c1")); // a repeated id: rewritten
        both(&mut cache, &history);
        history[2] = result("r1", "c1", "edited"); // same id, other content
        both(&mut cache, &history);
        history.truncate(2); // a fork of the start
        history.push(user("u3", "other"));
        both(&mut cache, &history);
        assert_eq!(cache.len(), 7, "every content read once, none forgotten yet");
    }

    #[test]
    fn content_keys_differ_with_the_content() {
        assert_eq!(content_key(b"abc"), content_key(b"abc"));
        assert_ne!(content_key(b"abc"), content_key(b"abd"));
        assert_ne!(content_key(b""), content_key(b" "));
    }
}
