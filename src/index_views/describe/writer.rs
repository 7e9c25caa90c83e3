//! The text layout of `kubectl describe`: lines indented two spaces a level, with cells split
//! by tabs aligned as Go's `text/tabwriter` aligns them (no minimum width, two spaces of
//! padding), in sections a flush ends.

use std::io::Write as _;

use tabwriter::TabWriter;

/// Collects a describe's output, a section at a time.
#[derive(Default)]
pub(super) struct Out {
    /// The section being written: text with tabs, aligned when flushed.
    pending: String,
    lines: Vec<String>,
}

impl Out {
    /// Writes `text` at `level`: two spaces per level before it, as kubectl's prefix writer.
    pub(super) fn w(&mut self, level: usize, text: &str) {
        for _ in 0..level {
            self.pending.push_str("  ");
        }
        escape_into(&mut self.pending, text);
    }

    /// Ends the section: its tab-separated cells are aligned among its own lines only.
    pub(super) fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.pending);
        let mut tw = TabWriter::new(Vec::with_capacity(text.len() * 2))
            .minwidth(0)
            .padding(2);
        // Writing to a Vec cannot fail; into_inner only fails if a flush did.
        let aligned = match tw.write_all(text.as_bytes()).and_then(|()| tw.flush()) {
            Ok(()) => tw
                .into_inner()
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .unwrap_or_else(|_| text.replace('\t', "  ")),
            Err(_) => text.replace('\t', "  "),
        };
        self.lines.extend(aligned.lines().map(str::to_owned));
    }

    pub(super) fn finish(mut self) -> Vec<String> {
        self.flush();
        self.lines
    }
}

/// Appends `text` with terminal control characters (but tab and newline) shown as `^X`, as
/// kubectl escapes what it prints: an object's fields must never drive the terminal.
fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\t' | '\n' => out.push(c),
            c if (c as u32) < 0x20 => {
                out.push('^');
                out.push(char::from(c as u8 + b'@'));
            }
            '\u{7f}' => out.push_str("^?"),
            c if c.is_control() => out.push('?'),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_align_within_a_block_of_lines_that_have_them() {
        let mut out = Out::default();
        out.w(0, "Name:\tweb\n");
        out.w(0, "Namespace:\tdefault\n");
        out.w(0, "Containers:\n");
        out.w(2, "Image:\tnginx\n");
        assert_eq!(
            out.finish(),
            [
                "Name:       web",
                "Namespace:  default",
                "Containers:",
                "    Image:  nginx"
            ]
        );
    }

    #[test]
    fn a_flush_ends_the_alignment() {
        let mut out = Out::default();
        out.w(0, "A:\t1\n");
        out.flush();
        out.w(0, "Longer:\t2\n");
        assert_eq!(out.finish(), ["A:  1", "Longer:  2"]);
    }

    #[test]
    fn control_characters_are_shown_not_sent() {
        let mut out = Out::default();
        out.w(0, "Message:\tred \x1b[31m bell \x07\n");
        assert_eq!(out.finish(), ["Message:  red ^[[31m bell ^G"]);
    }
}
