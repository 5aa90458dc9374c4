//! The final words on a Responses item: its `output_item.done`, then the terminal event's
//! `output`, each piece settled against what streamed (`docs/wire.md`, section 5).

use serde_json::value::RawValue;

use super::reasoning::Key;
use super::said::Said;
use super::{Final, Item, ItemFields, OpenAiResponses, Slot, TextPart};
use crate::assemble::{Builder, Settled};
use crate::dialect::DialectName;
use crate::error::Error;

impl OpenAiResponses {
    /// The final word on the item at `pos`: each piece of it settled against what streamed, and
    /// on `output_item.done` its signature, whole blocks and end.
    pub(super) fn settle_item(
        &mut self,
        pos: usize,
        raw: &RawValue,
        item: &ItemFields<'_>,
        word: Final,
        builder: &mut Builder,
    ) -> Result<(), Error> {
        let done = word == Final::Done;
        self.items[pos].done = true;
        let Item { id: item_id, slot, .. } = &mut self.items[pos];
        match slot {
            Slot::Reasoning(reasoning) => {
                let content = item.content.iter().flatten().enumerate().filter_map(|(index, part)| {
                    let text = part.text.as_deref().filter(|_| part.kind.as_deref() == Some("reasoning_text"))?;
                    Some((Key { summary: false, index: index as u64 }, text))
                });
                let summary = item.summary.iter().flatten().enumerate().map(|(index, part)| {
                    (Key { summary: true, index: index as u64 }, part.text.as_deref().unwrap_or(""))
                });
                let finals: Vec<(Key, &str)> = content.chain(summary).collect();
                reasoning.settle_item(&finals, item_id, builder);
                // `.added` and `.done` carry different encrypted content: only `.done`'s is valid.
                reasoning.sign(item.encrypted_content.as_deref().unwrap_or(""), item_id, builder);
            }
            Slot::Message { .. } => {
                for (index, part) in item.content.iter().flatten().enumerate() {
                    let (text, refusal) = part.text();
                    self.refusal |= refusal;
                    self.settle_part(pos, index as u64, text, builder);
                }
                self.cite(pos, item, builder)?;
            }
            &mut Slot::Server(block) => {
                if done {
                    if let Some(server) = crate::server_tool::from_responses(raw.get()) {
                        builder.set_whole(block, server)?;
                    }
                    builder.end_whole(block);
                }
            }
            &mut Slot::Call(block) => {
                if let Some(arguments) = item.arguments.as_deref().or(item.input.as_deref()) {
                    builder.tool_set_args(block, arguments)?;
                }
                builder.end_tool(block);
            }
            &mut Slot::Raw(block) => {
                if done {
                    builder.set_unknown_block(block, crate::dialect::kept_whole(raw, DialectName::OpenAiResponses))?;
                }
            }
        }
        Ok(())
    }

    /// The item's own word on each part's annotations (a response body has no other).
    fn cite(&self, pos: usize, item: &ItemFields<'_>, builder: &mut Builder) -> Result<(), Error> {
        let Slot::Message(parts) = &self.items[pos].slot else { return Ok(()) };
        for (index, part) in item.content.iter().flatten().enumerate() {
            let Some(block) = parts.iter().find(|p| p.index == index as u64).and_then(|p| p.block.as_ref()) else {
                continue;
            };
            let text = match builder.message().content.get(*block) {
                Some(crate::canonical::Block::Text(t)) => t.text.clone(),
                _ => continue,
            };
            let citations: Vec<_> = part
                .annotations
                .iter()
                .flatten()
                .filter_map(|a| crate::citation::from_responses(a.get(), &text))
                .collect();
            builder.set_citations(*block, citations)?;
        }
        Ok(())
    }

    /// The final text of content part `content_index` of the message item at `pos` (its `.done`
    /// events', its item's): settled against what streamed, or a new block when none did.
    pub(super) fn settle_part(&mut self, pos: usize, content_index: u64, text: &str, builder: &mut Builder) {
        let Item { id, slot, .. } = &mut self.items[pos];
        let Slot::Message(parts) = slot else {
            builder.diagnostic("text_without_item", "output text for an item that is not a message");
            return;
        };
        let part = text_part(parts, content_index);
        let settled = match part.block {
            Some(block) => builder.settle_tail(block, 0, text),
            None if text.is_empty() => Settled::Same,
            None => {
                let block = builder.new_text();
                builder.set_item_id(block, id);
                part.block = Some(block);
                builder.push_text(block, text);
                Settled::Completed { streamed: 0 }
            }
        };
        part.said.report(settled, format_args!("message item {id:?}, part {content_index}"), text.len(), builder);
    }

    /// `response.completed`'s (or `.incomplete`'s) `output`, the server's summary of the items:
    /// each settled as a second `output_item.done` (or as the first, where that never came); an
    /// item it adds, or leaves out, is a diagnostic. An `output` that is empty or absent says
    /// nothing (some servers send none), one that cannot be read is a diagnostic.
    pub(super) fn settle_output(&mut self, output: &RawValue, builder: &mut Builder) -> Result<(), Error> {
        let items: Vec<(&RawValue, ItemFields<'_>)> = match serde_json::from_str::<Option<Vec<&RawValue>>>(output.get())
            .and_then(|items| {
                items.unwrap_or_default().into_iter().map(|raw| Ok((raw, serde_json::from_str(raw.get())?))).collect()
            }) {
            Ok(items) => items,
            Err(error) => {
                builder
                    .diagnostic("unreadable_output", format!("the output of the terminal event was not read: {error}"));
                return Ok(());
            }
        };
        if items.is_empty() {
            return Ok(());
        }
        let mut told = vec![false; self.items.len()];
        for (index, (raw, item)) in items.iter().enumerate() {
            let id = item.id.as_deref().unwrap_or("");
            let index = index as u64;
            let found =
                self.items.iter().rposition(|i| (!id.is_empty() && i.id == id) || i.output_index == Some(index));
            let pos = if let Some(pos) = found {
                pos
            } else {
                let message = format!("item {id:?} is in the terminal event's output but never streamed; added");
                builder.diagnostic("item_only_in_output", message);
                self.item_added(raw, Some(index), builder)?;
                self.items.len() - 1
            };
            let word = if self.items[pos].done { Final::Completed } else { Final::Done };
            self.settle_item(pos, raw, item, word, builder)?;
            told.resize(self.items.len(), false);
            told[pos] = true;
        }
        for (item, _) in self.items.iter().zip(&told).filter(|(_, told)| !**told) {
            let message = format!("item {:?} streamed but is not in the terminal event's output; kept", item.id);
            builder.diagnostic("item_not_in_output", message);
        }
        Ok(())
    }

    /// The blocks must follow the items (and a message's parts) in order: a piece that came
    /// only after a later item's (in a `.done`, or the terminal event) made its block after
    /// theirs, which the final output does not. Said once.
    pub(super) fn check_order(&self, builder: &mut Builder) {
        let mut last = None;
        for item in &self.items {
            let blocks: Vec<usize> = match &item.slot {
                Slot::Reasoning(reasoning) => reasoning.block_index().into_iter().collect(),
                Slot::Message(parts) => {
                    let mut parts: Vec<_> = parts.iter().filter_map(|p| Some((p.index, p.block?))).collect();
                    parts.sort_unstable();
                    parts.into_iter().map(|(_, block)| block).collect()
                }
                &Slot::Call(block) | &Slot::Server(block) | &Slot::Raw(block) => vec![block],
            };
            for block in blocks {
                if last.is_some_and(|last| block < last) {
                    let message =
                        format!("item {:?} has a block after a later item's, out of the output's order", item.id);
                    builder.diagnostic("blocks_out_of_order", message);
                    return;
                }
                last = Some(block);
            }
        }
    }
}

/// The content part `index` of a message item, added when it is new.
pub(super) fn text_part(parts: &mut Vec<TextPart>, index: u64) -> &mut TextPart {
    let pos = parts.iter().position(|p| p.index == index).unwrap_or_else(|| {
        parts.push(TextPart { index, block: None, said: Said::default() });
        parts.len() - 1
    });
    &mut parts[pos]
}
