//! The thinking block of a Responses reasoning item, built piece by piece.
//!
//! A reasoning item's text is its `reasoning_text` content parts, then its summary parts, joined
//! by a blank line (`docs/wire.md`, section 5). Each piece may arrive by deltas, by its `.done`
//! event (`reasoning_text.done`, `reasoning_summary_text.done`, `reasoning_summary_part.done`),
//! by the item's `output_item.done` and by `response.completed`; the `*.part.added` event that
//! announces a summary part may be missing. So a piece begins with whichever of its events comes
//! first, and each later word on it is settled against what streamed: the same text adds nothing,
//! a longer one adds the rest, another one is a diagnostic (what streamed is kept: its events are
//! out). Each piece keeps its place in the block's text, so that its own `.done` can be checked.

use super::said::Said;
use crate::assemble::{Builder, Settled};
use crate::canonical::Block;

/// A piece of a reasoning item's text: a `reasoning_text` content part (by `content_index`) or
/// a summary part (by `summary_index`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Key {
    pub summary: bool,
    pub index: u64,
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.summary { "summary part" } else { "reasoning_text part" };
        write!(f, "{kind} {}", self.index)
    }
}

/// A piece begun: where its text is in the thinking block's.
#[derive(Debug)]
struct Piece {
    key: Key,
    start: usize,
    end: usize,
    said: Said,
}

/// The thinking block of one reasoning item (created on its first text or signature: an item
/// with neither would be an empty block that no event describes) and its pieces, in stream order.
#[derive(Debug, Default)]
pub(super) struct Reasoning {
    block: Option<usize>,
    pieces: Vec<Piece>,
    /// The item's final word lists other pieces than streamed (said once).
    other_pieces: bool,
}

const SEPARATOR: &str = "\n\n";

impl Reasoning {
    /// The position of the piece an event names (`index` `None`: the piece of that kind being
    /// written, else the first), begun now when it is new.
    pub fn piece(&mut self, summary: bool, index: Option<u64>, item: &str, builder: &mut Builder) -> usize {
        let last = self.pieces.last().filter(|p| p.key.summary == summary).map(|p| p.key.index);
        let key = Key { summary, index: index.or(last).unwrap_or(0) };
        match self.pieces.iter().rposition(|p| p.key == key) {
            Some(pos) => pos,
            None => self.begin(key, item, builder),
        }
    }

    fn begin(&mut self, key: Key, item: &str, builder: &mut Builder) -> usize {
        if !self.pieces.is_empty() {
            let block = self.block(item, builder);
            builder.push_thinking(block, SEPARATOR);
        }
        let at = self.len(builder);
        self.pieces.push(Piece { key, start: at, end: at, said: Said::default() });
        self.pieces.len() - 1
    }

    /// Text for the piece at `pos`, appended to the block.
    pub fn delta(&mut self, pos: usize, text: &str, item: &str, builder: &mut Builder) {
        if text.is_empty() {
            return;
        }
        if pos + 1 != self.pieces.len() {
            let (this, last) = (self.pieces[pos].key, self.pieces[self.pieces.len() - 1].key);
            let message =
                format!("reasoning item {item:?}: text for its {this} after its {last} began; appended there");
            builder.diagnostic("part_out_of_order", message);
        }
        let block = self.block(item, builder);
        builder.push_thinking(block, text);
        self.touch(builder);
    }

    /// The final text of the piece at `pos` (its `.done` event's, or the item's).
    pub fn settle(&mut self, pos: usize, text: &str, item: &str, builder: &mut Builder) {
        let Piece { key, start, end, .. } = self.pieces[pos];
        let settled = if pos + 1 < self.pieces.len() {
            // a piece behind the last one can only be checked
            if self.text(builder).get(start..end) == Some(text) { Settled::Same } else { Settled::Differs }
        } else if text.is_empty() && start == end {
            Settled::Same
        } else {
            let block = self.block(item, builder);
            let settled = builder.settle_tail(block, start, text);
            self.touch(builder);
            settled
        };
        let what = format_args!("reasoning item {item:?}, {key}");
        self.pieces[pos].said.report(settled, what, text.len(), builder);
    }

    /// The item's final word (`output_item.done`, `response.completed`): each of its pieces, in
    /// order. Pieces that streamed are settled; those that did not are appended.
    pub fn settle_item(&mut self, finals: &[(Key, &str)], item: &str, builder: &mut Builder) {
        for (at, &(key, text)) in finals.iter().enumerate() {
            let pos = match self.pieces.get(at) {
                Some(piece) if piece.key == key => at,
                Some(piece) => {
                    let message = format!(
                        "reasoning item {item:?}: its {} streamed where its final word has its {key}; the streamed text kept",
                        piece.key
                    );
                    self.other_pieces(message, builder);
                    return;
                }
                None => self.begin(key, item, builder),
            };
            self.settle(pos, text, item, builder);
        }
        if self.pieces.len() > finals.len() {
            let message = format!(
                "reasoning item {item:?}: {} parts streamed, its final word has {}; the streamed text kept",
                self.pieces.len(),
                finals.len()
            );
            self.other_pieces(message, builder);
        }
    }

    fn other_pieces(&mut self, message: String, builder: &mut Builder) {
        if !std::mem::replace(&mut self.other_pieces, true) {
            builder.diagnostic("final_text_differs", message);
        }
    }

    /// The item's `encrypted_content`: the first final word's (`output_item.done`). The server
    /// encrypts anew for each event that carries the item, so a later one differs and is not
    /// taken.
    pub fn sign(&mut self, signature: &str, item: &str, builder: &mut Builder) {
        if signature.is_empty() {
            return;
        }
        let signed = self.block.is_some_and(
            |block| matches!(builder.message().content.get(block), Some(Block::Thinking(t)) if t.signature.is_some()),
        );
        if !signed {
            let block = self.block(item, builder);
            builder.thinking_signature(block, signature);
        }
    }

    /// The last piece now ends where the block's text does.
    fn touch(&mut self, builder: &Builder) {
        let end = self.len(builder);
        if let Some(last) = self.pieces.last_mut() {
            last.end = end;
        }
    }

    fn text<'b>(&self, builder: &'b Builder) -> &'b str {
        match self.block.and_then(|block| builder.message().content.get(block)) {
            Some(Block::Thinking(t)) => &t.thinking,
            _ => "",
        }
    }

    fn len(&self, builder: &Builder) -> usize {
        self.text(builder).len()
    }

    /// The block, with the item's id, created on first use.
    fn block(&mut self, item: &str, builder: &mut Builder) -> usize {
        *self.block.get_or_insert_with(|| {
            let block = builder.new_thinking();
            builder.set_item_id(block, item);
            block
        })
    }

    /// The block, when it was created.
    pub fn block_index(&self) -> Option<usize> {
        self.block
    }
}
