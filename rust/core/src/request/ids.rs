//! Tool-call ids a target accepts, and the ids sent in place of the others.
//!
//! A call made by one provider can carry an id another refuses: Kimi's `functions.get_weather:0`
//! (Anthropic wants `^[a-zA-Z0-9_-]+$`), an OpenAI Responses id of 60 characters (OpenAI Chat
//! takes at most 40), any id but 9 letters and digits (Mistral), an empty id (a Gemini before 3
//! or Ollama call written by hand). Every call id of a request is checked against the dialect's
//! rule ([`CallIds`]) and the stricter rule of the server behind it, if the options name one
//! ([`IdFormat`]). An id that passes, the first time it appears, is sent unchanged: a request
//! read from a provider goes back to it byte for byte. Any other id (refused, empty, or the
//! repeat of an earlier call's id) is replaced by one derived from it by a hash fixed in this
//! file (FNV-1a, then a 64-bit finalizer): the same history gives the same request every time,
//! which prompt caching needs, and never an id another call of the request has. The plan
//! applies the new id to the call and to its results alike; each replacement is reported.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde::Deserialize;

use super::{Action, Loss};

/// A server's rule for tool-call ids (the `tool_call_ids` option names one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum IdFormat {
    /// OpenAI Chat Completions: 1 to 40 characters.
    #[serde(rename = "openai")]
    OpenAi,
    /// OpenAI Responses: 1 to 64 characters.
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// Anthropic Messages: `^[a-zA-Z0-9_-]+$`.
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Mistral (an OpenAI-compatible server): exactly 9 characters `[a-zA-Z0-9]`.
    #[serde(rename = "mistral")]
    Mistral,
}

impl IdFormat {
    /// Whether the server takes `id`.
    pub fn accepts(self, id: &str) -> bool {
        match self {
            Self::OpenAi => (1..=40).contains(&id.chars().count()),
            Self::OpenAiResponses => (1..=64).contains(&id.chars().count()),
            Self::Anthropic => {
                !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            }
            Self::Mistral => id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric()),
        }
    }

    fn rule(self) -> &'static str {
        match self {
            Self::OpenAi => "OpenAI Chat takes 1 to 40 characters",
            Self::OpenAiResponses => "OpenAI Responses takes 1 to 64 characters",
            Self::Anthropic => "Anthropic takes ^[a-zA-Z0-9_-]+$",
            Self::Mistral => "Mistral takes exactly 9 letters or digits",
        }
    }
}

/// How a dialect's requests carry call ids (declared in its [`super::Target`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallIds {
    /// No call ids in the request (Ollama: results name their tool).
    Unsent,
    /// Ids are optional (Gemini): an empty id, or one msgwire made up for a call that came
    /// without one, is left out; any other id is sent.
    Optional,
    /// Every call and result carries an id of this format.
    Required(IdFormat),
}

/// Whether msgwire made up `id` for a call that came without one (`call_<hex or dashes>_<n>`,
/// see `assemble::Builder::synthetic_call_id`).
pub fn made_up(id: &str) -> bool {
    let Some((middle, n)) = id.strip_prefix("call_").and_then(|rest| rest.rsplit_once('_')) else { return false };
    !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && middle.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}

/// Whether a call with `id` is sent with an id (see [`CallIds`]; a replaced id always is).
pub(crate) fn sent(ids: CallIds, id: &str) -> bool {
    match ids {
        CallIds::Unsent => false,
        CallIds::Optional => !id.is_empty() && !made_up(id),
        CallIds::Required(_) => true,
    }
}

/// One tool call of the request, where it is.
pub(crate) struct CallSite<'a> {
    /// Index of the assistant message in the input.
    pub message: usize,
    /// Index of the block in that message.
    pub block: usize,
    /// The assistant message's own id (makes the ids of repeated call ids differ).
    pub message_id: &'a str,
    pub id: &'a str,
}

/// The id each call is sent with where it is not its own, by `(message, block)`; each
/// replacement goes to `report`. `calls` are in input order.
pub(crate) fn assign(
    calls: &[CallSite<'_>],
    ids: CallIds,
    server: Option<IdFormat>,
    report: &mut Vec<Loss>,
) -> HashMap<(usize, usize), String> {
    let mut rewritten = HashMap::new();
    let own = match ids {
        CallIds::Unsent => return rewritten,
        CallIds::Optional => None,
        CallIds::Required(format) => Some(format),
    };
    let formats: Vec<IdFormat> = own.into_iter().chain(server).collect();
    // Every id sent unchanged is reserved first, so that a replacement never takes one.
    let mut taken: HashSet<Cow<'_, str>> = HashSet::with_capacity(calls.len());
    let mut replace = Vec::new();
    for (k, call) in calls.iter().enumerate() {
        if !sent(ids, call.id) {
            continue;
        }
        let refused = formats.iter().copied().find(|f| !f.accepts(call.id));
        if refused.is_none() && taken.insert(Cow::Borrowed(call.id)) {
            continue;
        }
        replace.push((k, refused));
    }
    if replace.is_empty() {
        return rewritten;
    }
    let short = formats.contains(&IdFormat::Mistral);
    let mut seen: HashSet<&str> = HashSet::with_capacity(calls.len());
    let mut repeated = vec![false; calls.len()];
    for (k, call) in calls.iter().enumerate() {
        repeated[k] = !seen.insert(call.id);
    }
    for (k, refused) in replace {
        let call = &calls[k];
        // The first call with an id is keyed by the id alone (it keeps its new id when the
        // history grows); a repeat also by where it is.
        let block = u64::try_from(call.block).unwrap_or(u64::MAX).to_le_bytes(); // the same on every platform
        let key: Vec<&[u8]> = if repeated[k] {
            vec![call.id.as_bytes(), call.message_id.as_bytes(), &block]
        } else {
            vec![call.id.as_bytes()]
        };
        let mut attempt: u32 = 0;
        let new = loop {
            let salt = attempt.to_le_bytes();
            let mut parts = key.clone();
            if attempt > 0 {
                parts.push(&salt);
            }
            let candidate = derived(hash(&parts), short);
            if !taken.contains(candidate.as_str()) {
                break candidate;
            }
            attempt += 1;
        };
        let reason = match (refused, call.id.is_empty()) {
            (_, true) => format!("an empty tool call id: sent as {new:?}, in its results too"),
            (Some(format), false) => {
                format!("tool call id {:?} refused ({}): sent as {new:?}, in its results too", call.id, format.rule())
            }
            (None, false) => {
                format!("tool call id {:?} repeats an earlier call's: sent as {new:?}, in its results too", call.id)
            }
        };
        report.push(Loss::new(call.message, Some(call.block), "tool_call_id", Action::Rewrite, reason));
        taken.insert(Cow::Owned(new.clone()));
        rewritten.insert((call.message, call.block), new);
    }
    rewritten
}

/// FNV-1a over the parts (a 0xff byte, never in UTF-8, between them), then the finalizer of
/// `MurmurHash3` so that every bit of the result depends on every byte. Both are fixed here:
/// an id derived once is derived the same by every later version (std's hashers promise no
/// such thing).
fn hash(parts: &[&[u8]]) -> u64 {
    fmix64(fnv1a(parts))
}

fn fnv1a(parts: &[&[u8]]) -> u64 {
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (n, part) in parts.iter().enumerate() {
        if n > 0 {
            h = (h ^ 0xff).wrapping_mul(PRIME);
        }
        for &b in *part {
            h = (h ^ u64::from(b)).wrapping_mul(PRIME);
        }
    }
    h
}

fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The id of a hash: `call_` and 16 hex digits (every format but Mistral's takes it), or 9
/// letters and digits when Mistral's rule applies.
fn derived(hash: u64, short: bool) -> String {
    if !short {
        return format!("call_{hash:016x}");
    }
    let mut n = hash;
    let mut out = String::with_capacity(9);
    for _ in 0..9 {
        out.push(char::from(BASE62[(n % 62) as usize]));
        n /= 62;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(message: usize, block: usize, id: &str) -> CallSite<'_> {
        CallSite { message, block, message_id: "m", id }
    }

    #[test]
    fn formats_follow_the_providers_rules() {
        assert!(IdFormat::Anthropic.accepts("toolu_01A09q90qw90lq917835lq9"));
        assert!(IdFormat::Anthropic.accepts("call-1_x"));
        assert!(!IdFormat::Anthropic.accepts("functions.get_weather:0"));
        assert!(!IdFormat::Anthropic.accepts(""));
        assert!(IdFormat::OpenAi.accepts("functions.get_weather:0"));
        assert!(IdFormat::OpenAi.accepts(&"é".repeat(40)), "characters, not bytes");
        assert!(!IdFormat::OpenAi.accepts(&"a".repeat(41)));
        assert!(!IdFormat::OpenAi.accepts(""));
        assert!(IdFormat::OpenAiResponses.accepts(&"a".repeat(64)));
        assert!(!IdFormat::OpenAiResponses.accepts(&"a".repeat(65)));
        assert!(IdFormat::Mistral.accepts("D681PevKs"));
        assert!(!IdFormat::Mistral.accepts("D681PevK"));
        assert!(!IdFormat::Mistral.accepts("D681Pev_s"));
    }

    #[test]
    fn accepted_ids_are_kept_and_others_derived_deterministically() {
        let calls = [site(1, 0, "call_ok"), site(1, 1, "functions.get_weather:0"), site(3, 0, "")];
        let mut report = Vec::new();
        let ids = assign(&calls, CallIds::Required(IdFormat::Anthropic), None, &mut report);
        assert_eq!(ids.len(), 2);
        assert!(!ids.contains_key(&(1, 0)));
        let kimi = &ids[&(1, 1)];
        assert!(kimi.starts_with("call_") && kimi.len() == 21 && IdFormat::Anthropic.accepts(kimi), "{kimi}");
        assert!(IdFormat::Anthropic.accepts(&ids[&(3, 0)]));
        let again = assign(&calls, CallIds::Required(IdFormat::Anthropic), None, &mut Vec::new());
        assert_eq!(ids, again);
        let steps: Vec<_> = report.iter().map(|l| (l.message, l.block, l.kind, l.action)).collect();
        assert_eq!(
            steps,
            [(1, Some(1), "tool_call_id", Action::Rewrite), (3, Some(0), "tool_call_id", Action::Rewrite)]
        );
        assert!(report[0].reason.contains("functions.get_weather:0"), "{}", report[0].reason);
    }

    #[test]
    fn a_first_call_keeps_its_new_id_when_the_history_grows() {
        let one = [site(1, 0, "a.b")];
        let two = [site(1, 0, "a.b"), site(5, 0, "a.b")];
        let first = assign(&one, CallIds::Required(IdFormat::Anthropic), None, &mut Vec::new());
        let grown = assign(&two, CallIds::Required(IdFormat::Anthropic), None, &mut Vec::new());
        assert_eq!(first[&(1, 0)], grown[&(1, 0)]);
        assert_ne!(grown[&(1, 0)], grown[&(5, 0)]);
    }

    #[test]
    fn repeated_ids_get_distinct_ones() {
        let calls = [site(1, 0, "c"), site(1, 1, "c"), site(2, 0, "c"), site(2, 1, ""), site(2, 2, "")];
        let mut report = Vec::new();
        let ids = assign(&calls, CallIds::Required(IdFormat::OpenAi), None, &mut report);
        let mut sent: Vec<&str> = vec!["c"];
        sent.extend(ids.values().map(String::as_str));
        let unique: HashSet<&str> = sent.iter().copied().collect();
        assert_eq!((sent.len(), unique.len()), (5, 5), "{sent:?}");
        assert!(report[0].reason.contains("repeats"), "{}", report[0].reason);
    }

    #[test]
    fn a_replacement_never_takes_an_id_sent_unchanged() {
        // the id "a.b" would become this one: a later call already has it
        let taken = derived(hash(&[b"a.b"]), false);
        let calls = [site(1, 0, "a.b"), site(2, 0, &taken)];
        let ids = assign(&calls, CallIds::Required(IdFormat::Anthropic), None, &mut Vec::new());
        assert_eq!(ids.len(), 1);
        assert_ne!(ids[&(1, 0)], taken);
    }

    #[test]
    fn mistral_ids_are_nine_letters_and_digits() {
        let calls = [site(1, 0, "call_8Qh3fN2pLk1mZ0aV"), site(1, 1, "D681PevKs"), site(1, 2, "")];
        let mut report = Vec::new();
        let ids = assign(&calls, CallIds::Required(IdFormat::OpenAi), Some(IdFormat::Mistral), &mut report);
        assert_eq!(ids.len(), 2);
        assert!(ids.values().all(|id| IdFormat::Mistral.accepts(id)), "{ids:?}");
        assert!(report[0].reason.contains("Mistral"), "{}", report[0].reason);
    }

    #[test]
    fn gemini_leaves_out_empty_and_made_up_ids_and_ollama_sends_none() {
        let calls = [site(1, 0, ""), site(1, 1, "call_0a1b2c3d4e5f_1"), site(1, 2, "96c1su3s"), site(2, 0, "96c1su3s")];
        let ids = assign(&calls, CallIds::Optional, None, &mut Vec::new());
        assert_eq!(ids.keys().collect::<Vec<_>>(), [&(2, 0)]);
        assert!(assign(&calls, CallIds::Unsent, Some(IdFormat::Mistral), &mut Vec::new()).is_empty());
        assert!(made_up("call_3_0"));
        assert!(made_up("call_9b2c-4f1a8e_12"));
        assert!(!made_up("call_8Qh3fN2pLk1mZ0aV"));
        assert!(!made_up("96c1su3s"));
        assert!(!made_up("call_1_"));
        assert!(!made_up("call_zz_1"));
        assert!(!made_up("call_0a1b2c3d4e5f6a7b"), "a derived id is sent");
    }

    #[test]
    fn the_hash_is_fixed() {
        // the published FNV-1a 64 test vectors, and ids pinned once: they must never change
        assert_eq!(fnv1a(&[b"a"]), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(&[b"foobar"]), 0x8594_4171_f739_67e8);
        assert_ne!(fnv1a(&[b"ab"]), fnv1a(&[b"a", b"b"]));
        assert_eq!(derived(hash(&[b"functions.get_weather:0"]), false), "call_8793c2a335999254");
        assert_eq!(derived(hash(&[b"functions.get_weather:0"]), true), "mGbefJbnf");
    }
}
