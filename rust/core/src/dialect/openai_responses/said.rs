//! What the final words on one piece of a Responses output said, and the diagnostic each new one
//! earns (the rule: `docs/wire.md`, section 5).

use std::fmt::Display;

use crate::assemble::{Builder, Settled};

/// The final words on one piece (a text part, a reasoning part) so far.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Said {
    /// A final word came (a `.done` event, the item's, the terminal event's).
    settled: bool,
    /// One differed from what the piece holds, and a diagnostic said so (once: the terminal
    /// event restates every item).
    differs: bool,
}

impl Said {
    /// A final word on `what`, of `len` bytes, settled as `settled`: text that never streamed
    /// arriving whole is no news, and the same text again is none either; deltas that stopped
    /// short of the first final word (`deltas_incomplete`), and a final word that differs from
    /// an earlier one or from what streamed (`final_text_differs`), are diagnostics.
    pub fn report(&mut self, settled: Settled, what: impl Display, len: usize, builder: &mut Builder) {
        let first = !std::mem::replace(&mut self.settled, true);
        match settled {
            Settled::Same => {}
            Settled::Completed { streamed: 0 } if first => {}
            Settled::Completed { streamed } if first => {
                let message = format!(
                    "{what}: the deltas gave {streamed} of the {len} bytes of its final text; the rest appended"
                );
                builder.diagnostic("deltas_incomplete", message);
            }
            Settled::Completed { .. } => {
                let message = format!("{what}: a later final word is longer than the one before; the rest appended");
                builder.diagnostic("final_text_differs", message);
            }
            Settled::Differs if self.differs => {}
            Settled::Differs => {
                self.differs = true;
                builder.diagnostic("final_text_differs", format!("{what}: its final text is not what streamed; kept"));
            }
        }
    }
}
